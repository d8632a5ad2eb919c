package gate

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Always rules may carry an expiry (chosen on the scope step: an hour,
// today, none). An expired rule stops matching at once (AlwaysRule.Active);
// the gate also deletes expired rules periodically, so lists stay short,
// each deletion audited as rule_expired.

// PruneEvery is how often a started gate deletes expired Always rules.
const PruneEvery = time.Minute

// PruneExpiredRules deletes every Always rule expired at the gate's now,
// and returns how many it deleted.
func (g *Gate) PruneExpiredRules(ctx context.Context) (int, error) {
	rules, err := g.store.ListRules(ctx, "")
	if err != nil {
		return 0, fmt.Errorf("list always rules: %w", err)
	}
	now := g.now()
	n := 0
	for _, r := range rules {
		if r.ExpiresAt == nil || now.Before(*r.ExpiresAt) {
			continue
		}
		if _, err := g.store.DeleteRule(ctx, r.ID); err != nil {
			if errors.Is(err, ErrNotFound) {
				continue // revoked meanwhile
			}
			return n, fmt.Errorf("delete expired rule %s: %w", r.ID, err)
		}
		g.forgetAlways(r.Agent)
		_ = g.audit(ctx, AuditEntry{Event: "rule_expired", Agent: r.Agent, Tool: r.Tool, By: "expiry",
			Detail: string(r.Scope) + " " + r.Pattern})
		n++
	}
	return n, nil
}

// pruneLoop prunes expired rules every PruneEvery until the gate closes.
func (g *Gate) pruneLoop() {
	t := time.NewTicker(PruneEvery)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for {
		select {
		case <-g.done:
			return
		case <-t.C:
			if n, err := g.PruneExpiredRules(ctx); err != nil && !g.isClosed() {
				g.logger.Error("prune expired always rules", "err", err)
			} else if n > 0 {
				g.logger.Info("expired always rules pruned", "rules", n)
			}
		}
	}
}

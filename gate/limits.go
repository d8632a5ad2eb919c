package gate

import (
	"context"
	"fmt"
	"time"
)

// agentUsage is what one agent holds: approvals pending (reserved when a
// submit starts storing one, so racing submits cannot overshoot) and tool
// input bytes stored over all its approvals until they are pruned.
type agentUsage struct {
	pending int
	bytes   int64
}

func (g *Gate) usageLocked(agent string) *agentUsage {
	u, ok := g.usage[agent]
	if !ok {
		u = &agentUsage{}
		g.usage[agent] = u
	}
	return u
}

// reserveLocked counts a new pending approval of size input bytes against
// agent's caps, or says which cap it would break (ErrTooMany).
func (g *Gate) reserveLocked(agent string, size int64) error {
	u := g.usageLocked(agent)
	if max := g.cfg.MaxPending; max > 0 && u.pending >= max {
		return fmt.Errorf("%w: agent %q has %d approvals pending (the cap is %d); decide or cancel some first", ErrTooMany, agent, u.pending, max)
	}
	if max := g.cfg.MaxStoredBytes; max > 0 && u.bytes+size > max {
		return fmt.Errorf("%w: agent %q has %d bytes of tool input stored (the cap is %d); old approvals are pruned after the retention period", ErrTooMany, agent, u.bytes, max)
	}
	u.pending++
	u.bytes += size
	return nil
}

// releaseLocked undoes reserveLocked for an approval that was not stored.
func (g *Gate) releaseLocked(agent string, size int64) {
	u := g.usageLocked(agent)
	u.pending = max(u.pending-1, 0)
	u.bytes = max(u.bytes-size, 0)
}

// decidedLocked counts an approval of agent that left pending.
func (g *Gate) decidedLocked(agent string) {
	u := g.usageLocked(agent)
	u.pending = max(u.pending-1, 0)
}

// Retention's pace: a small transaction at a time, so submits and
// decisions are never held behind a long write.
const (
	retainEvery = time.Hour
	retainBatch = 500
)

// retain prunes decided approvals older than the retention period, now and
// then every retainEvery, until the gate closes.
func (g *Gate) retain() {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-t.C:
		}
		if _, err := g.Prune(context.Background()); err != nil && !g.isClosed() {
			g.logger.Error("retention: prune failed", "err", err)
		}
		t.Reset(retainEvery)
	}
}

// Prune removes decided approvals older than the retention period, in
// small transactions, and returns how many it removed. The audit log is
// kept whole: its entries name the pruned approvals' ids and still verify.
func (g *Gate) Prune(ctx context.Context) (int, error) {
	if g.cfg.Retention <= 0 {
		return 0, nil
	}
	before := g.now().Add(-g.cfg.Retention)
	total := 0
	for {
		select {
		case <-g.done:
			return total, nil
		default:
		}
		n, err := g.store.PruneApprovals(ctx, before, retainBatch)
		total += n
		if err != nil {
			return total, fmt.Errorf("prune approvals decided before %s: %w", before.Format(time.RFC3339), err)
		}
		if n < retainBatch {
			break
		}
	}
	if total == 0 {
		return 0, nil
	}
	stored, err := g.store.AgentBytes(ctx)
	if err != nil {
		return total, fmt.Errorf("reload stored bytes per agent: %w", err)
	}
	g.mu.Lock()
	for agent, u := range g.usage {
		u.bytes = stored[agent]
	}
	for agent, n := range stored {
		g.usageLocked(agent).bytes = n
	}
	g.mu.Unlock()
	g.logger.Info("retention: pruned decided approvals", "count", total, "decided_before", before)
	return total, nil
}

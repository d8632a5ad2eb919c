package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// normalize validates c and fills defaults, and decodes its input once
// with exact keys (scanInput; case variants of the fields the gate reads
// are refused for tools of kind k other than KindName). It returns
// ErrInvalid (wrapped) for anything malformed, before anything is recorded.
func normalize(c Call, k ToolKind) (Call, toolInput, error) {
	if c.Agent == "" {
		c.Agent = "default"
	}
	switch {
	case c.Tool == "":
		return c, toolInput{}, fmt.Errorf("%w: tool is required", ErrInvalid)
	case len(c.Tool) > maxToolLen, len(c.Agent) > maxAgentLen, len(c.SessionID) > maxIDLen,
		len(c.IdempotencyKey) > maxIDLen, len(c.Cwd) > maxCwdLen:
		return c, toolInput{}, fmt.Errorf("%w: a field is too long", ErrInvalid)
	case len(c.Input) > maxInputLen:
		return c, toolInput{}, fmt.Errorf("%w: input larger than %d bytes", ErrInvalid, maxInputLen)
	case !utf8.ValidString(c.Tool) || !utf8.ValidString(c.Agent) || !utf8.ValidString(c.SessionID) || !utf8.ValidString(c.Cwd):
		return c, toolInput{}, fmt.Errorf("%w: fields must be UTF-8", ErrInvalid)
	case derivedKey(c.IdempotencyKey):
		return c, toolInput{}, fmt.Errorf("%w: idempotency keys starting with %q are reserved", ErrInvalid, derivedKeyPrefix)
	}
	in, err := scanInput(c.Input, k != KindName)
	if err != nil {
		return c, in, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return c, in, nil
}

// kind returns the kind of tool under the rules in force, and the home
// directory the rules expand `~` with.
func (g *Gate) kind(tool string) (ToolKind, string) {
	if p := g.policy.Load(); p != nil {
		return p.Kind(tool), p.home
	}
	return KindName, ""
}

func denialKey(agent, tool, digest string) string {
	return agent + "\x00" + tool + "\x00" + digest
}

// Evaluate answers a call from the rules without recording anything.
func (g *Gate) Evaluate(ctx context.Context, c Call) (Evaluation, error) {
	kind, _ := g.kind(c.Tool)
	c, _, err := normalize(c, kind)
	if err != nil {
		return Evaluation{}, err
	}
	return g.evaluate(ctx, c)
}

func (g *Gate) evaluate(ctx context.Context, c Call) (Evaluation, error) {
	set, err := g.alwaysSet(ctx, c.Agent)
	if err != nil {
		return Evaluation{}, err
	}
	mode, err := g.Mode(ctx, c.Agent)
	if err != nil {
		return Evaluation{}, err
	}
	p := g.policy.Load()
	if p == nil {
		return Evaluation{}, errors.New("no rules loaded")
	}
	return p.Evaluate(c, Env{Mode: mode, Always: set, Now: g.now()}), nil
}

// Submit evaluates a call. allow/deny are answered at once (status allowed or
// denied, audited, not stored as approvals). ask creates a pending approval,
// durable before any frontend hears of it; a call whose idempotency key
// already names an approval attaches to it, or conflicts, as Reuse says.
// ErrInvalid (wrapped) for a bad call (including an input with duplicate or
// case-variant keys); ErrConflict (wrapped, audited) for a key bound to
// another call.
func (g *Gate) Submit(ctx context.Context, c Call) (*Approval, error) {
	if g.isClosed() {
		return nil, ErrClosed
	}
	arrived := g.now()
	kind, home := g.kind(c.Tool)
	c, in, err := normalize(c, kind)
	if err != nil {
		return nil, err
	}
	digest, err := c.Digest()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	c.IdempotencyKey = idempotencyKey(c, digest)
	a := &Approval{
		Agent: c.Agent, SessionID: c.SessionID, Tool: c.Tool, Input: c.Input, Cwd: c.Cwd,
		IdempotencyKey: c.IdempotencyKey, Digest: digest, Deferred: c.Deferred, Judged: judgeInput(kind, c, in, home), CreatedAt: arrived,
	}
	// A re-post finds its approval without evaluating again; CreateApproval
	// checks once more, atomically, for submits racing this one.
	if prev, err := g.store.FindApproval(ctx, c.Agent, c.IdempotencyKey); err == nil {
		if ok, err := Reuse(prev, a); err != nil || ok {
			return g.reused(ctx, prev, a, err)
		}
	} else if !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("find approval by idempotency key: %w", err)
	}

	ev, err := g.evaluate(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("evaluate %s call of %s: %w", c.Tool, c.Agent, err)
	}
	a.ID, a.Evaluation = newID(), ev
	switch ev.Decision {
	case Allow, Deny:
		return g.answerAtOnce(ctx, a, ev.Decision, ev.Reason, "rules")
	}
	// A person denied this exact call moments ago: say so again instead of
	// prompting again.
	if g.cfg.DenyMemory > 0 {
		d, err := g.store.RecentDenial(ctx, denialKey(c.Agent, c.Tool, digest), arrived)
		switch {
		case err == nil:
			reason := "denied earlier by " + d.By
			if d.Reason != "" {
				reason += ": " + d.Reason
			}
			a.DecidedBy = d.By
			return g.answerAtOnce(ctx, a, Deny, reason, "memory")
		case !errors.Is(err, ErrNotFound):
			return nil, fmt.Errorf("look up denial memory: %w", err)
		}
	}

	a.Status = StatusPending
	a.Deadline = arrived.Add(g.cfg.Timeout)
	// From the commit on, a decision may reach the approval (a racing
	// submit attached and was answered, the pending list showed it) before
	// it is announced; registering it first lets finish leave the
	// announcement of both to this call, in order.
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil, ErrClosed
	}
	size := int64(len(a.Input))
	if err := g.reserveLocked(a.Agent, size); err != nil {
		g.mu.Unlock()
		g.logger.Warn("call refused: agent over its cap", "agent", a.Agent, "tool", a.Tool, "err", err)
		return nil, err
	}
	g.creating[a.ID] = nil
	g.mu.Unlock()
	stored, err := g.store.CreateApproval(ctx, a, AuditEntry{Event: "pending", Time: g.now(), Agent: a.Agent,
		Tool: a.Tool, Digest: digest, Status: StatusPending, Detail: ev.Reason})
	if err != nil {
		g.mu.Lock()
		delete(g.creating, a.ID)
		g.releaseLocked(a.Agent, size)
		g.mu.Unlock()
		if errors.Is(err, ErrExists) || errors.Is(err, ErrConflict) {
			return g.reused(ctx, stored, a, err) // a racing submit under the same key won
		}
		return nil, fmt.Errorf("store approval for %s call of %s: %w", c.Tool, c.Agent, err)
	}
	return g.announce(stored), nil
}

// announce publishes a stored pending approval and hands it to the
// frontends, unless a decision came first: then both events go out, in
// order, and no prompt is sent for a call that is already decided. It
// returns the approval as it now is.
func (g *Gate) announce(stored *Approval) *Approval {
	g.mu.Lock()
	early := g.creating[stored.ID]
	delete(g.creating, stored.ID)
	if g.closed {
		g.mu.Unlock()
		return stored // stays pending in the store; the next start re-notifies
	}
	g.publishLocked(Event{Type: EventApprovalRequired, Approval: stored})
	if early != nil {
		g.publishLocked(Event{Type: EventApprovalResolved, Approval: early})
		g.mu.Unlock()
		g.logger.Info("approval decided before it was announced", "approval", early.ID, "status", early.Status)
		return early
	}
	g.pending++
	g.armTimerLocked(stored.ID, stored.Deadline)
	g.mu.Unlock()
	g.notify(stored)
	g.logger.Info("approval pending", "approval", stored.ID, "agent", stored.Agent, "tool", stored.Tool)
	return stored
}

// reused answers a call whose key names the approval prev: prev itself when
// the call attaches (err nil or ErrExists), else the conflict, audited.
func (g *Gate) reused(ctx context.Context, prev, next *Approval, err error) (*Approval, error) {
	if err == nil || errors.Is(err, ErrExists) {
		return prev, nil
	}
	if errors.Is(err, ErrConflict) {
		_ = g.audit(ctx, AuditEntry{Event: "idempotency_conflict", ApprovalID: prev.ID, Agent: next.Agent,
			Tool: next.Tool, Digest: next.Digest, Detail: "key " + clipKey(next.IdempotencyKey) + " reused for another call"})
		g.logger.Warn("idempotency key reused for another call", "approval", prev.ID, "agent", next.Agent, "tool", next.Tool)
	}
	return nil, err
}

// answerAtOnce completes a call the rules (or denial memory) decided. The
// answer is returned only once its audit entry is on disk (concurrent
// answers share a commit); if it cannot be written, the call fails rather
// than be answered unaudited.
func (g *Gate) answerAtOnce(ctx context.Context, a *Approval, d Action, reason, via string) (*Approval, error) {
	a.Decision = d
	a.Reason = reason
	a.Via = via
	a.Status = StatusAllowed
	if d == Deny {
		a.Status = StatusDenied
	}
	t := a.CreatedAt
	a.DecidedAt = &t
	err := g.audit(ctx, AuditEntry{Event: "evaluated", ApprovalID: a.ID, Agent: a.Agent, Tool: a.Tool,
		Digest: a.Digest, Status: a.Status, Decision: d, By: a.DecidedBy, Detail: reason})
	if err != nil {
		return nil, fmt.Errorf("audit %s answer to %s call of %s: %w", a.Status, a.Tool, a.Agent, err)
	}
	return a, nil
}

// audit appends e, durably, for an event that changes no stored state
// (state changes write their entry in their own transaction). bbolt
// groups concurrent appends into one fsync.
func (g *Gate) audit(ctx context.Context, e AuditEntry) error {
	e.Time = g.now()
	// Detached from the request: the audit line must be written even if
	// the client has gone.
	if _, err := g.store.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		g.logger.Error("audit append failed", "event", e.Event, "approval", e.ApprovalID, "err", err)
		return err
	}
	return nil
}

// Wait blocks until the approval with id is final or ctx ends, and returns
// it as it then is (still pending if ctx ended first; the error is nil then).
// ErrNotFound for an unknown id; ErrClosed when the gate closes.
func (g *Gate) Wait(ctx context.Context, id string) (*Approval, error) {
	// Reads are short and must still answer once ctx has ended: the caller
	// then gets the approval as it is.
	rctx := context.WithoutCancel(ctx)
	for {
		a, err := g.Get(rctx, id)
		if err != nil {
			return nil, err
		}
		if a.Status.Final() {
			return a, nil
		}
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			return a, ErrClosed
		}
		ch, ok := g.waiters[id]
		if !ok {
			ch = make(chan struct{})
			g.waiters[id] = ch
		}
		g.mu.Unlock()
		// Re-read after registering: a decision between the first read and
		// the registration would otherwise be missed.
		if a, err = g.Get(rctx, id); err != nil {
			return nil, err
		}
		if a.Status.Final() {
			return a, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return a, nil
		case <-g.done:
			return a, ErrClosed
		}
	}
}

// Decide applies a person's decision. Only the first decision counts:
// ErrAlreadyDecided (with the approval as it is) for the others;
// ErrDigestMismatch if d.Digest is set and differs; ErrNotFound.
// Authorization is the caller's job (frontends check their approver lists,
// the API its tokens).
func (g *Gate) Decide(ctx context.Context, id string, d Decision) (*Approval, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	if len(d.Reason) > maxReasonLen || len(d.By) > maxAgentLen || len(d.Via) > maxAgentLen {
		return nil, fmt.Errorf("%w: reason or decider too long", ErrInvalid)
	}
	if d.Digest != "" && len(d.Digest) < 8 {
		return nil, fmt.Errorf("%w: digest prefix too short", ErrInvalid)
	}
	if d.By == "" {
		d.By = "unknown"
	}
	if d.Always && !d.Approve {
		return nil, fmt.Errorf("%w: always needs approve", ErrInvalid)
	}
	if d.Stop && d.Approve {
		return nil, fmt.Errorf("%w: stop needs deny", ErrInvalid)
	}
	switch d.Scope {
	case "":
		d.Scope = ScopeAgent
	case ScopeAgent, ScopeSession:
	default:
		return nil, fmt.Errorf("%w: unknown scope %q", ErrInvalid, d.Scope)
	}
	now := g.now()
	a, err := g.finish(ctx, id, func(a *Approval) error {
		if d.Digest != "" && !strings.HasPrefix(a.Digest, d.Digest) {
			return ErrDigestMismatch
		}
		if d.Always && len(a.Evaluation.AlwaysRules) == 0 {
			return fmt.Errorf("%w: this call has no safe Always pattern; approve it once", ErrInvalid)
		}
		a.DecidedBy, a.Via, a.Reason = d.By, d.Via, d.Reason
		switch {
		case d.Approve && d.Always:
			a.Status, a.Decision = StatusApprovedAlways, Allow
		case d.Approve:
			a.Status, a.Decision = StatusApproved, Allow
		case d.Stop:
			a.Status, a.Decision = StatusDeniedStop, Deny
		default:
			a.Status, a.Decision = StatusDenied, Deny
		}
		return nil
	})
	if err != nil {
		return a, err
	}
	if a.Decision == Deny && g.cfg.DenyMemory > 0 {
		err := g.store.RememberDenial(ctx, Denial{Key: denialKey(a.Agent, a.Tool, a.Digest), Reason: a.Reason,
			By: a.DecidedBy, ApprovalID: a.ID, Until: now.Add(g.cfg.DenyMemory)})
		if err != nil {
			g.logger.Error("remember denial failed", "approval", a.ID, "err", err)
		}
	}
	if a.Status == StatusApprovedAlways {
		for _, p := range a.Evaluation.AlwaysRules {
			r := AlwaysRule{Agent: a.Agent, Tool: p.Tool, Pattern: p.Pattern, Scope: d.Scope,
				ExpiresAt: d.ExpiresAt, CreatedBy: d.By, ApprovalID: a.ID}
			if d.Scope == ScopeSession {
				r.SessionID = a.SessionID
			}
			if _, err := g.addRule(ctx, r, false); err != nil {
				g.logger.Error("save always rule failed", "approval", a.ID, "pattern", p.Pattern, "err", err)
			}
		}
		g.cascade(ctx, a.Agent, d.By, "always-rule")
	}
	return a, nil
}

// Cancel closes a pending approval because its agent went away.
func (g *Gate) Cancel(ctx context.Context, id string, reason string) (*Approval, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	if len(reason) > maxReasonLen {
		return nil, fmt.Errorf("%w: reason too long", ErrInvalid)
	}
	if reason == "" {
		reason = "the agent went away"
	}
	return g.finish(ctx, id, func(a *Approval) error {
		a.Status, a.Decision, a.Reason, a.Via = StatusCancelled, Deny, reason, "agent"
		return nil
	})
}

// expire closes an approval whose deadline passed.
func (g *Gate) expire(ctx context.Context, id string) (*Approval, error) {
	return g.finish(ctx, id, func(a *Approval) error {
		a.Status, a.Decision, a.Via = StatusExpired, Deny, "timeout"
		a.Reason = fmt.Sprintf("no decision within %s", a.Deadline.Sub(a.CreatedAt).Round(time.Second))
		return nil
	})
}

// finish moves a pending approval to a final state with fn, atomically in
// the store together with its audit entry (so of racing decisions exactly
// one wins, and none is on disk unaudited), then wakes waiters, publishes
// and tells the notifiers.
func (g *Gate) finish(ctx context.Context, id string, fn func(*Approval) error) (*Approval, error) {
	now := g.now()
	var current *Approval
	a, err := g.store.UpdateApprovalAudit(ctx, id, func(a *Approval) (*AuditEntry, error) {
		if a.Status.Final() {
			current = a
			return nil, ErrAlreadyDecided
		}
		if err := fn(a); err != nil {
			current = a
			return nil, err
		}
		a.DecidedAt = &now
		return &AuditEntry{Event: "decided", Time: now, ApprovalID: a.ID, Agent: a.Agent, Tool: a.Tool,
			Digest: a.Digest, Status: a.Status, Decision: a.Decision, By: a.DecidedBy, Detail: a.Reason}, nil
	})
	if err != nil {
		if current != nil {
			// Callers show the current state ("already decided by ...").
			return current, fmt.Errorf("decide approval %s: %w", id, err)
		}
		return nil, fmt.Errorf("decide approval %s: %w", id, err)
	}
	g.mu.Lock()
	g.decidedLocked(a.Agent)
	if t, ok := g.timers[id]; ok {
		t.Stop()
		delete(g.timers, id)
	}
	if ch, ok := g.waiters[id]; ok {
		close(ch)
		delete(g.waiters, id)
	}
	if _, ok := g.creating[id]; ok {
		// Decided before its Submit announced it: announce publishes both.
		g.creating[id] = a
		g.mu.Unlock()
		return a, nil
	}
	if g.pending > 0 {
		g.pending--
	}
	g.publishLocked(Event{Type: EventApprovalResolved, Approval: a})
	g.mu.Unlock()
	g.resolved(a)
	g.logger.Info("approval decided", "approval", a.ID, "status", a.Status, "by", a.DecidedBy, "via", a.Via)
	return a, nil
}

func (g *Gate) armTimerLocked(id string, deadline time.Time) {
	if g.closed {
		return
	}
	g.timers[id] = time.AfterFunc(deadline.Sub(g.now()), func() {
		ctx := context.Background()
		if _, err := g.expire(ctx, id); err != nil && !errors.Is(err, ErrAlreadyDecided) && !g.isClosed() {
			g.logger.Error("expire approval failed", "approval", id, "err", err)
		}
	})
}

// cascade re-evaluates the agent's other pending approvals after its Always
// rules or its mode changed, and resolves those the rules now decide
// (approve after an Always rule or approve_all, deny under strict).
// It reads the agent's pending approvals a page at a time, from the
// pending index, so other agents' approvals are never decoded.
func (g *Gate) cascade(ctx context.Context, agent, by, why string) {
	q := ListQuery{Status: StatusPending, Agent: agent, Limit: DefaultPageSize, MaxBytes: DefaultPageBytes}
	for {
		page, err := g.store.ListApprovalsPage(ctx, q)
		if err != nil {
			g.logger.Error("cascade: list pending failed", "agent", agent, "err", err)
			return
		}
		g.cascadePage(ctx, page.Approvals, by, why)
		if page.Next == 0 {
			return
		}
		q.After = page.Next
	}
}

func (g *Gate) cascadePage(ctx context.Context, pending []*Approval, by, why string) {
	for _, p := range pending {
		ev, err := g.evaluate(ctx, p.Call())
		if err != nil || ev.Decision == Ask {
			continue
		}
		_, err = g.finish(ctx, p.ID, func(a *Approval) error {
			a.Decision, a.DecidedBy, a.Via, a.Reason = ev.Decision, by, why, ev.Reason
			a.Status = StatusApproved
			if ev.Decision == Deny {
				a.Status = StatusDenied
			}
			return nil
		})
		if err != nil && !errors.Is(err, ErrAlreadyDecided) {
			g.logger.Error("cascade: resolve failed", "approval", p.ID, "err", err)
		}
	}
}

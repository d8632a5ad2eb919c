// Package apitest provides an in-memory fake of the gate for tests of the
// API server, its client, and the commands that use them.
package apitest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"approvalbot/gate"
)

// Fake implements api.Service in memory. Answer says what the "rules"
// answer for a call (ask when nil). It follows the gate's contracts that
// the API relies on: idempotent submits, first decision wins, Wait honours
// ctx, Subscribe replays pending approvals then streams live events.
type Fake struct {
	// Answer answers calls at once with Allow or Deny; Ask makes a pending
	// approval. Nil means Ask. Set before use.
	Answer func(gate.Call) gate.Action
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu        sync.Mutex
	seq       int
	approvals map[string]*gate.Approval
	order     []string
	byKey     map[string]string // agent+key -> id
	done      map[string]chan struct{}
	subs      map[chan gate.Event]struct{}
	rules     []gate.AlwaysRule
	modes     map[string]gate.Mode
	audit     []gate.AuditEntry
	health    gate.Health
	submits   int
	closed    bool
	auditErr  error
}

// NewFake returns an empty fake that asks about every call.
func NewFake() *Fake {
	return &Fake{
		approvals: map[string]*gate.Approval{},
		byKey:     map[string]string{},
		done:      map[string]chan struct{}{},
		subs:      map[chan gate.Event]struct{}{},
		modes:     map[string]gate.Mode{},
		health:    gate.Health{OK: true},
	}
}

func (f *Fake) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func cloneApproval(a *gate.Approval) *gate.Approval {
	c := *a
	c.Input = slices.Clone(a.Input)
	return &c
}

// Submit answers allow/deny at once, or creates (or attaches to) a pending approval.
func (f *Fake) Submit(ctx context.Context, c gate.Call) (*gate.Approval, error) {
	if c.Agent == "" || c.Tool == "" {
		return nil, fmt.Errorf("submit: agent and tool are required: %w", gate.ErrInvalid)
	}
	digest, err := c.Digest()
	if err != nil {
		return nil, fmt.Errorf("submit: %v: %w", err, gate.ErrInvalid)
	}
	action := gate.Ask
	if f.Answer != nil {
		action = f.Answer(c)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, gate.ErrClosed
	}
	f.submits++
	now := f.now()
	ev := gate.Evaluation{Decision: action, Reason: "fake rules", Kind: gate.KindName,
		Commands: []gate.Verdict{{Kind: "tool", Subject: c.Tool, Decision: action,
			Rule: &gate.RuleRef{Layer: gate.LayerStatic, File: "rules.jsonc", Line: 1, Tool: c.Tool, Pattern: "*", Action: action}}}}
	switch action {
	case gate.Allow, gate.Deny:
		f.seq++
		status := gate.StatusAllowed
		if action == gate.Deny {
			status = gate.StatusDenied
		}
		return &gate.Approval{ID: fmt.Sprintf("c%d", f.seq), Status: status, Decision: action, Reason: ev.Reason,
			Via: "rules", Agent: c.Agent, SessionID: c.SessionID, Tool: c.Tool, Input: slices.Clone(c.Input),
			Cwd: c.Cwd, Digest: digest, Evaluation: ev, CreatedAt: now, DecidedAt: &now}, nil
	}
	key := c.IdempotencyKey
	if key == "" {
		h := sha256.Sum256([]byte(c.SessionID + "\x00" + c.Tool + "\x00" + digest))
		key = "derived-" + hex.EncodeToString(h[:8])
	}
	if id, ok := f.byKey[c.Agent+"\x00"+key]; ok {
		return cloneApproval(f.approvals[id]), nil
	}
	f.seq++
	a := &gate.Approval{ID: fmt.Sprintf("a%d", f.seq), Status: gate.StatusPending, Agent: c.Agent,
		SessionID: c.SessionID, Tool: c.Tool, Input: slices.Clone(c.Input), Cwd: c.Cwd, IdempotencyKey: key,
		Digest: digest, Evaluation: ev, CreatedAt: now, Deadline: now.Add(10 * time.Minute)}
	f.approvals[a.ID] = a
	f.order = append(f.order, a.ID)
	f.byKey[c.Agent+"\x00"+key] = a.ID
	f.done[a.ID] = make(chan struct{})
	f.publish(gate.Event{Type: gate.EventApprovalRequired, Approval: cloneApproval(a)})
	return cloneApproval(a), nil
}

// publish sends ev to every subscriber, dropping those whose buffer is full.
// Called with f.mu held.
func (f *Fake) publish(ev gate.Event) {
	for ch := range f.subs {
		select {
		case ch <- ev:
		default:
			delete(f.subs, ch)
			close(ch)
		}
	}
}

// Wait blocks until the approval is final or ctx ends.
func (f *Fake) Wait(ctx context.Context, id string) (*gate.Approval, error) {
	f.mu.Lock()
	done, ok := f.done[id]
	f.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("wait %s: %w", id, gate.ErrNotFound)
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	return f.Get(context.Background(), id)
}

// Get returns one approval.
func (f *Fake) Get(ctx context.Context, id string) (*gate.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok {
		return nil, fmt.Errorf("approval %s: %w", id, gate.ErrNotFound)
	}
	return cloneApproval(a), nil
}

// List returns approvals with status, oldest first.
func (f *Fake) List(ctx context.Context, status gate.Status) ([]*gate.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*gate.Approval
	for _, id := range f.order {
		if a := f.approvals[id]; status == "" || a.Status == status {
			out = append(out, cloneApproval(a))
		}
	}
	return out, nil
}

// ListPage returns a page of approvals; the cursor is a position in
// creation order.
func (f *Fake) ListPage(ctx context.Context, q gate.ListQuery) (gate.Page, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var p gate.Page
	for i := q.After; i < uint64(len(f.order)); i++ {
		a := f.approvals[f.order[i]]
		if len(p.Approvals) >= q.Limit {
			p.Next = i
			break
		}
		if (q.Status == "" || a.Status == q.Status) && (q.Agent == "" || a.Agent == q.Agent) {
			p.Approvals = append(p.Approvals, cloneApproval(a))
		}
	}
	return p, nil
}

// resolve makes a pending approval final; f.mu held.
func (f *Fake) resolve(a *gate.Approval, status gate.Status, decision gate.Action, reason, by, via string) {
	now := f.now()
	a.Status, a.Decision, a.Reason, a.DecidedBy, a.Via, a.DecidedAt = status, decision, reason, by, via, &now
	close(f.done[a.ID])
	f.publish(gate.Event{Type: gate.EventApprovalResolved, Approval: cloneApproval(a)})
}

// Decide applies a decision; the first one wins.
func (f *Fake) Decide(ctx context.Context, id string, d gate.Decision) (*gate.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok {
		return nil, fmt.Errorf("decide %s: %w", id, gate.ErrNotFound)
	}
	if a.Status.Final() {
		return cloneApproval(a), fmt.Errorf("decide %s: %w by %s", id, gate.ErrAlreadyDecided, a.DecidedBy)
	}
	if d.Digest != "" && d.Digest != a.Digest {
		return nil, fmt.Errorf("decide %s: %w", id, gate.ErrDigestMismatch)
	}
	switch {
	case d.Approve && d.Always:
		scope := d.Scope
		if scope == "" {
			scope = gate.ScopeAgent
		}
		f.addRule(gate.AlwaysRule{Agent: a.Agent, Tool: a.Tool, Pattern: "*", Scope: scope, SessionID: a.SessionID,
			ExpiresAt: d.ExpiresAt, CreatedBy: d.By, ApprovalID: a.ID})
		f.resolve(a, gate.StatusApprovedAlways, gate.Allow, d.Reason, d.By, d.Via)
	case d.Approve:
		f.resolve(a, gate.StatusApproved, gate.Allow, d.Reason, d.By, d.Via)
	case d.Stop:
		f.resolve(a, gate.StatusDeniedStop, gate.Deny, d.Reason, d.By, d.Via)
	default:
		f.resolve(a, gate.StatusDenied, gate.Deny, d.Reason, d.By, d.Via)
	}
	f.audit = append(f.audit, gate.AuditEntry{Seq: uint64(len(f.audit) + 1), Time: f.now(), Event: "decided",
		ApprovalID: a.ID, Agent: a.Agent, Tool: a.Tool, Status: a.Status, Decision: a.Decision, By: d.By})
	return cloneApproval(a), nil
}

// Cancel closes a pending approval.
func (f *Fake) Cancel(ctx context.Context, id string, reason string) (*gate.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok {
		return nil, fmt.Errorf("cancel %s: %w", id, gate.ErrNotFound)
	}
	if a.Status.Final() {
		return cloneApproval(a), fmt.Errorf("cancel %s: %w", id, gate.ErrAlreadyDecided)
	}
	f.resolve(a, gate.StatusCancelled, gate.Deny, reason, a.Agent, "api")
	return cloneApproval(a), nil
}

// Rules lists Always rules of agent ("" for all).
func (f *Fake) Rules(ctx context.Context, agent string) ([]gate.AlwaysRule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []gate.AlwaysRule
	for _, r := range f.rules {
		if agent == "" || r.Agent == agent {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f *Fake) addRule(r gate.AlwaysRule) gate.AlwaysRule {
	f.seq++
	r.ID = fmt.Sprintf("r%d", f.seq)
	r.CreatedAt = f.now()
	f.rules = append(f.rules, r)
	return r
}

// AddRule stores an Always rule.
func (f *Fake) AddRule(ctx context.Context, r gate.AlwaysRule) (gate.AlwaysRule, error) {
	if r.Agent == "" || r.Tool == "" || r.Pattern == "" {
		return gate.AlwaysRule{}, fmt.Errorf("add rule: %w: agent, tool and pattern required", gate.ErrInvalid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addRule(r), nil
}

// RemoveRule deletes an Always rule.
func (f *Fake) RemoveRule(ctx context.Context, id, by string) (gate.AlwaysRule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.rules {
		if r.ID == id {
			f.rules = slices.Delete(f.rules, i, i+1)
			return r, nil
		}
	}
	return gate.AlwaysRule{}, fmt.Errorf("remove rule %s: %w", id, gate.ErrNotFound)
}

// SetMode sets an agent's mode.
func (f *Fake) SetMode(ctx context.Context, agent string, m gate.Mode, by string) error {
	if !m.Valid() {
		return fmt.Errorf("set mode: %w: %q", gate.ErrInvalid, m)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.modes[agent] = m
	return nil
}

// Mode returns an agent's mode.
func (f *Fake) Mode(ctx context.Context, agent string) (gate.Mode, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.modes[agent]; ok {
		return m, nil
	}
	return gate.ModeInteractive, nil
}

// subscriberBuffer is how many events a subscriber may lag behind.
const subscriberBuffer = 256

// Subscribe replays pending approvals, then streams live events until ctx ends.
func (f *Fake) Subscribe(ctx context.Context) <-chan gate.Event {
	ch := make(chan gate.Event, subscriberBuffer)
	f.mu.Lock()
	if f.closed {
		close(ch)
		f.mu.Unlock()
		return ch
	}
	for _, id := range f.order {
		if a := f.approvals[id]; a.Status == gate.StatusPending {
			ch <- gate.Event{Type: gate.EventApprovalRequired, Approval: cloneApproval(a)}
		}
	}
	f.subs[ch] = struct{}{}
	f.mu.Unlock()
	go func() {
		<-ctx.Done()
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.subs[ch]; ok {
			delete(f.subs, ch)
			close(ch)
		}
	}()
	return ch
}

// Close ends every subscription and makes Submit fail with gate.ErrClosed.
func (f *Fake) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for ch := range f.subs {
		delete(f.subs, ch)
		close(ch)
	}
}

// Subscribers returns the number of live subscriptions.
func (f *Fake) Subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// Submits returns how many calls were submitted.
func (f *Fake) Submits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.submits
}

// SetHealth sets what Health reports.
func (f *Fake) SetHealth(h gate.Health) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.health = h
}

// Health reports the configured health, with the pending count.
func (f *Fake) Health(ctx context.Context) gate.Health {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.health
	for _, a := range f.approvals {
		if a.Status == gate.StatusPending {
			h.Pending++
		}
	}
	return h
}

// AppendAudit adds an entry to the fake audit log.
func (f *Fake) AppendAudit(e gate.AuditEntry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e.Seq = uint64(len(f.audit) + 1)
	f.audit = append(f.audit, e)
}

// Audit returns entries after seq, at most limit.
func (f *Fake) Audit(ctx context.Context, after uint64, limit int) ([]gate.AuditEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []gate.AuditEntry
	for _, e := range f.audit {
		if e.Seq > after && (limit == 0 || len(out) < limit) {
			out = append(out, e)
		}
	}
	return out, nil
}

// SetAuditErr makes VerifyAudit fail with err.
func (f *Fake) SetAuditErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auditErr = err
}

// VerifyAudit returns the number of entries, or the error set with SetAuditErr.
func (f *Fake) VerifyAudit(ctx context.Context) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.audit), f.auditErr
}

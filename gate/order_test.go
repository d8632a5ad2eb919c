package gate_test

import (
	"context"
	"path/filepath"
	"testing"

	"approvalbot/gate"
	"approvalbot/store"
)

// decideOnCreate is a store that, right after an approval is committed and
// before CreateApproval returns to the gate, lets a decision through: what
// a racing submit of the same key, or an approver reading the pending list,
// can do in that window.
type decideOnCreate struct {
	*store.Store
	after func(a *gate.Approval)
}

func (s decideOnCreate) CreateApproval(ctx context.Context, a *gate.Approval, audit ...gate.AuditEntry) (*gate.Approval, error) {
	stored, err := s.Store.CreateApproval(ctx, a, audit...)
	if err == nil {
		s.after(stored)
	}
	return stored, err
}

// TestEventsInOrder: an approval decided before its Submit announced it
// is published approval_required, then approval_resolved (never the other
// way round), is not counted as pending, and Submit answers the decision.
func TestEventsInOrder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := store.Open(filepath.Join(t.TempDir(), "approvalbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var g *gate.Gate
	ds := decideOnCreate{Store: st, after: func(a *gate.Approval) {
		if _, err := g.Decide(ctx, a.ID, gate.Decision{Approve: true, By: "ana"}); err != nil {
			t.Errorf("decide in the window: %v", err)
		}
	}}
	g = gate.New(gate.Config{}, testPolicy(t), ds, nil)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	events := g.Subscribe(ctx)

	a, err := g.Submit(ctx, call("AskTool", `{"cmd":"make deploy"}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != gate.StatusApproved {
		t.Fatalf("Submit answered %s, want the decision made before it returned (approved)", a.Status)
	}
	var got []string
	for e := range events {
		if e.Approval.ID != a.ID {
			continue
		}
		got = append(got, e.Type)
		if len(got) == 2 {
			break
		}
	}
	if got[0] != gate.EventApprovalRequired || got[1] != gate.EventApprovalResolved {
		t.Fatalf("events %v, want [%s %s]", got, gate.EventApprovalRequired, gate.EventApprovalResolved)
	}
	if h := g.Health(ctx); h.Pending != 0 {
		t.Fatalf("pending %d after the only approval was decided, want 0", h.Pending)
	}
}

// TestStateChangesAudited: every state an approval was stored in has its
// audit entry, written in the same transaction (see store's
// TestAuditInStateTransaction for the rollback side).
func TestStateChangesAudited(t *testing.T) {
	h := newHarness(t, gate.Config{})
	ctx := context.Background()
	approved := h.submit(call("AskTool", `{"n":1}`))
	denied := h.submit(call("AskTool", `{"n":2}`))
	cancelled := h.submit(call("AskTool", `{"n":3}`))
	pending := h.submit(call("AskTool", `{"n":4}`))
	allowed := h.submit(call("OkTool", `{"n":5}`))
	if _, err := h.g.Decide(ctx, approved.ID, gate.Decision{Approve: true, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Decide(ctx, denied.ID, gate.Decision{By: "ana", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Cancel(ctx, cancelled.ID, "gone"); err != nil {
		t.Fatal(err)
	}
	entries, err := h.g.Audit(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	has := map[string]map[string]gate.Status{} // approval -> event -> status
	for _, e := range entries {
		if has[e.ApprovalID] == nil {
			has[e.ApprovalID] = map[string]gate.Status{}
		}
		has[e.ApprovalID][e.Event] = e.Status
	}
	for _, tt := range []struct {
		id, event string
		status    gate.Status
	}{
		{approved.ID, "pending", gate.StatusPending}, {approved.ID, "decided", gate.StatusApproved},
		{denied.ID, "decided", gate.StatusDenied}, {cancelled.ID, "decided", gate.StatusCancelled},
		{pending.ID, "pending", gate.StatusPending}, {allowed.ID, "evaluated", gate.StatusAllowed},
	} {
		if got, ok := has[tt.id][tt.event]; !ok || got != tt.status {
			t.Errorf("approval %s: audit %q = %q (present %v), want %q", tt.id, tt.event, got, ok, tt.status)
		}
	}
	if _, ok := has[pending.ID]["decided"]; ok {
		t.Errorf("pending approval %s has a decided entry", pending.ID)
	}
	if _, err := h.g.VerifyAudit(ctx); err != nil {
		t.Fatal(err)
	}
}

package store

import (
	"context"
	"errors"
	"testing"

	"approvalbot/gate"
)

// TestAuditInStateTransaction: a state change and its audit entry are one
// transaction: both are on disk after a reopen, neither when the change is
// refused, and an attach under an existing key appends nothing.
func TestAuditInStateTransaction(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	a := &gate.Approval{ID: "a1", Agent: "claude", Tool: "Bash", IdempotencyKey: "k", Digest: "d", Status: gate.StatusPending}
	if _, err := s.CreateApproval(ctx, a, gate.AuditEntry{Event: "pending", Status: gate.StatusPending}); err != nil {
		t.Fatal(err)
	}
	again := *a
	again.ID = "a2"
	if _, err := s.CreateApproval(ctx, &again, gate.AuditEntry{Event: "pending"}); !errors.Is(err, gate.ErrExists) {
		t.Fatalf("second create under the key: %v, want ErrExists", err)
	}
	refused := errors.New("refused")
	if _, err := s.UpdateApprovalAudit(ctx, "a1", func(a *gate.Approval) (*gate.AuditEntry, error) {
		a.Status = gate.StatusDenied
		return &gate.AuditEntry{Event: "decided"}, refused
	}); !errors.Is(err, refused) {
		t.Fatalf("refused update: %v", err)
	}
	if _, err := s.UpdateApprovalAudit(ctx, "a1", func(a *gate.Approval) (*gate.AuditEntry, error) {
		a.Status, a.Decision = gate.StatusApproved, gate.Allow
		return &gate.AuditEntry{Event: "decided", Status: a.Status}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es, err := s.ListAudit(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Event != "pending" || es[1].Event != "decided" || es[1].Status != gate.StatusApproved ||
		es[0].ApprovalID != "a1" || es[1].ApprovalID != "a1" {
		t.Fatalf("audit after reopen: %+v, want pending and decided(approved) of a1", es)
	}
	if got, err := s.GetApproval(ctx, "a1"); err != nil || got.Status != gate.StatusApproved {
		t.Fatalf("approval after reopen: %+v, %v", got, err)
	}
	if _, err := s.VerifyAudit(ctx); err != nil {
		t.Fatal(err)
	}
}

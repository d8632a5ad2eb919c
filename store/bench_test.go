package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// seedPending stores n pending approvals (and as many decided ones, so the
// pending index has something to skip) in one transaction through the same
// code as CreateApproval: seeding with n fsyncs would take minutes.
func seedPending(tb testing.TB, s *Store, n int) {
	tb.Helper()
	err := s.db.Update(func(tx *bolt.Tx) error {
		for i := range 2 * n {
			a := newApproval(fmt.Sprintf("seed-%06d", i), "claude", fmt.Sprintf("toolu_%06d", i))
			if i%2 == 1 {
				a.Status, a.Decision, a.DecidedBy = gate.StatusApproved, gate.Allow, "ana"
			}
			if _, err := createInTx(tx, a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func BenchmarkCreateApproval(b *testing.B) {
	s, _ := openTest(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if _, err := s.CreateApproval(ctx, newApproval(fmt.Sprintf("a%d", i), "claude", fmt.Sprintf("k%d", i))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListPending10k is what the daemon does at start-up with 10,000
// approvals pending (and 10,000 decided ones in the file).
func BenchmarkListPending10k(b *testing.B) {
	s, _ := openTest(b)
	seedPending(b, s, 10_000)
	ctx := context.Background()
	for b.Loop() {
		got, err := s.ListApprovals(ctx, gate.StatusPending)
		if err != nil || len(got) != 10_000 {
			b.Fatalf("ListApprovals = %d, %v", len(got), err)
		}
	}
}

// BenchmarkStartup10k measures Open (with the structural check) plus the
// pending list, on a file with 10,000 pending and 10,000 decided approvals
// and 20,000 audit entries.
func BenchmarkStartup10k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "approvalbot.db")
	s, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	seedPending(b, s, 10_000)
	if err := s.db.Update(func(tx *bolt.Tx) error {
		for range 20_000 {
			if err := appendInTx(tx, &gate.AuditEntry{Time: t0, Event: "evaluated", Agent: "claude", Tool: "Bash", Digest: "d"}, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		got, err := s.ListApprovals(ctx, gate.StatusPending)
		if err != nil || len(got) != 10_000 {
			b.Fatalf("ListApprovals = %d, %v", len(got), err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendAudit(b *testing.B) {
	s, _ := openTest(b)
	ctx := context.Background()
	e := gate.AuditEntry{Time: t0, Event: "decided", ApprovalID: "a1", Agent: "claude", Tool: "Bash", Digest: "d", Status: gate.StatusApproved, Decision: gate.Allow, By: "ana"}
	for b.Loop() {
		if _, err := s.AppendAudit(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFindApproval(b *testing.B) {
	s, _ := openTest(b)
	seedPending(b, s, 10_000)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i = (i + 7919) % 20_000
		if _, err := s.FindApproval(ctx, "claude", fmt.Sprintf("toolu_%06d", i)); err != nil {
			b.Fatal(err)
		}
	}
}

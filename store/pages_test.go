package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// fillMixed stores n approvals of agents a0..a2, every third one decided.
func fillMixed(t *testing.T, s *Store, n int) []*gate.Approval {
	t.Helper()
	ctx := context.Background()
	var out []*gate.Approval
	for i := range n {
		a := newApproval(fmt.Sprintf("id-%04d", i), fmt.Sprintf("a%d", i%3), fmt.Sprintf("k%d", i))
		a.CreatedAt = t0.Add(time.Duration(i) * time.Second)
		a.Input = []byte(fmt.Sprintf(`{"command":"echo %d"}`, i))
		if _, err := s.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
		if i%3 == 2 {
			var err error
			if a, err = s.UpdateApproval(ctx, a.ID, decide(gate.StatusDenied, "ana")); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, a)
	}
	return out
}

// pageAll follows the cursors of q to the end and returns the ids seen.
func pageAll(t *testing.T, s *Store, q gate.ListQuery) ([]string, int) {
	t.Helper()
	var got []string
	pages := 0
	for {
		p, err := s.ListApprovalsPage(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		got = append(got, ids(p.Approvals)...)
		if p.Next == 0 {
			return got, pages
		}
		if p.Next < q.After {
			t.Fatalf("cursor went back: %d after %d", p.Next, q.After)
		}
		q.After = p.Next
	}
}

// TestListApprovalsPage: every filter, paged with any limit, yields exactly
// what the full list filtered afterwards yields, in order.
func TestListApprovalsPage(t *testing.T) {
	s, _ := openTest(t)
	all := fillMixed(t, s, 40)
	for _, status := range []gate.Status{"", gate.StatusPending, gate.StatusDenied} {
		for _, agent := range []string{"", "a1", "nobody"} {
			for _, limit := range []int{1, 3, 7, 100} {
				want := []string{}
				for _, a := range all {
					if (status == "" || a.Status == status) && (agent == "" || a.Agent == agent) {
						want = append(want, a.ID)
					}
				}
				got, pages := pageAll(t, s, gate.ListQuery{Status: status, Agent: agent, Limit: limit})
				if got == nil {
					got = []string{}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("status %q agent %q limit %d: got %v, want %v", status, agent, limit, got, want)
				}
				if max := len(want)/limit + 2; pages > max {
					t.Errorf("status %q agent %q limit %d: %d pages for %d approvals", status, agent, limit, pages, len(want))
				}
			}
		}
	}
	// A byte bound stops a page early, but never before its first approval.
	p, err := s.ListApprovalsPage(context.Background(), gate.ListQuery{Limit: 100, MaxBytes: 1})
	if err != nil || len(p.Approvals) != 1 || p.Next == 0 {
		t.Fatalf("byte-bounded page = %d approvals, next %d, %v; want 1 and a cursor", len(p.Approvals), p.Next, err)
	}
	if _, err := s.ListApprovalsPage(context.Background(), gate.ListQuery{Limit: 0}); !errors.Is(err, gate.ErrInvalid) {
		t.Errorf("limit 0: %v, want ErrInvalid", err)
	}
}

// TestPendingRefsAndAgentBytes: start-up's view of the store matches the
// approvals, without decoding them.
func TestPendingRefsAndAgentBytes(t *testing.T) {
	s, _ := openTest(t)
	all := fillMixed(t, s, 9)
	refs, err := s.PendingRefs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var want []gate.PendingRef
	bytes := map[string]int64{}
	for _, a := range all {
		bytes[a.Agent] += int64(len(a.Input))
		if a.Status == gate.StatusPending {
			want = append(want, gate.PendingRef{ID: a.ID, Agent: a.Agent, Deadline: a.Deadline, InputSize: int64(len(a.Input))})
		}
	}
	for i := range refs {
		if i < len(want) && refs[i].Deadline.Equal(want[i].Deadline) {
			refs[i].Deadline = want[i].Deadline // same instant, another location
		}
	}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("PendingRefs = %+v\nwant %+v", refs, want)
	}
	got, err := s.AgentBytes(context.Background())
	if err != nil || !reflect.DeepEqual(got, bytes) {
		t.Errorf("AgentBytes = %v, %v; want %v", got, err, bytes)
	}
}

// TestPruneApprovals: decided approvals older than the cut are deleted in
// bounded batches, pending and recent ones stay, the idempotency key and
// the agent's bytes are freed, and the audit chain still verifies (it is
// kept whole).
func TestPruneApprovals(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	all := fillMixed(t, s, 30)
	for _, a := range all {
		if _, err := s.AppendAudit(ctx, gate.AuditEntry{Event: "pending", ApprovalID: a.ID, Time: a.CreatedAt}); err != nil {
			t.Fatal(err)
		}
	}
	// decide() stamps DecidedAt = t0+1m: everything decided is older than t0+2m.
	cut := t0.Add(2 * time.Minute)
	n, err := s.PruneApprovals(ctx, cut, 4)
	if err != nil || n != 4 {
		t.Fatalf("first batch pruned %d, %v; want 4", n, err)
	}
	n, err = s.PruneApprovals(ctx, cut, 100)
	if err != nil || n != 6 {
		t.Fatalf("second batch pruned %d, %v; want the other 6", n, err)
	}
	if n, _ := s.PruneApprovals(ctx, cut, 100); n != 0 {
		t.Fatalf("third batch pruned %d, want 0", n)
	}
	left, err := s.ListApprovals(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range left {
		if a.Status != gate.StatusPending {
			t.Errorf("%s (%s) was kept", a.ID, a.Status)
		}
	}
	if len(left) != 20 {
		t.Errorf("%d approvals left, want the 20 pending", len(left))
	}
	gone := all[2]
	if _, err := s.GetApproval(ctx, gone.ID); !errors.Is(err, gate.ErrNotFound) {
		t.Errorf("pruned approval still readable: %v", err)
	}
	if _, err := s.FindApproval(ctx, gone.Agent, gone.IdempotencyKey); !errors.Is(err, gate.ErrNotFound) {
		t.Errorf("pruned approval's key still indexed: %v", err)
	}
	// Every approval of a2 was decided (i%3 == 2), so none is left.
	if p, _ := s.ListApprovalsPage(ctx, gate.ListQuery{Agent: gone.Agent, Limit: 100}); len(p.Approvals) != 0 {
		t.Errorf("agent index lists %d of %s's approvals, want none", len(p.Approvals), gone.Agent)
	}
	if p, _ := s.ListApprovalsPage(ctx, gate.ListQuery{Agent: "a0", Limit: 100}); len(p.Approvals) != 10 {
		t.Errorf("agent index lists %d of a0's approvals, want its 10 pending", len(p.Approvals))
	}
	bytes, _ := s.AgentBytes(ctx)
	var want int64
	for _, a := range left {
		if a.Agent == gone.Agent {
			want += int64(len(a.Input))
		}
	}
	if _, ok := bytes[gone.Agent]; ok || want != 0 {
		t.Errorf("agent bytes %d after pruning, want %d", bytes[gone.Agent], want)
	}
	if n, err := s.VerifyAudit(ctx); err != nil || n != 30 {
		t.Errorf("audit after pruning: %d entries, %v; want 30 and a good chain", n, err)
	}
	// A recent cut prunes nothing.
	if n, _ := s.PruneApprovals(ctx, t0, 100); n != 0 {
		t.Errorf("pruned %d before t0", n)
	}
}

// TestUpgradeFromVersion1: a version 1 file (pending entries holding the
// id only, no agent index or byte counts) is upgraded on open, and read
// as it is when opened read-only.
func TestUpgradeFromVersion1(t *testing.T) {
	s, path := openTest(t)
	all := fillMixed(t, s, 12)
	// Turn the file back into version 1.
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketByAgent, bucketAgentBytes} {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		p := tx.Bucket(bucketPending)
		c := p.Cursor()
		type kv struct{ k, v []byte }
		var rewrite []kv
		for k, v := c.First(); k != nil; k, v = c.Next() {
			ref, err := approvalBuckets{schema: 2}.pendingRef(v)
			if err != nil {
				return err
			}
			rewrite = append(rewrite, kv{append([]byte(nil), k...), []byte(ref.ID)})
		}
		for _, e := range rewrite {
			if err := p.Put(e.k, e.v); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(metaSchema, u64(1))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	refs, err := ro.PendingRefs(context.Background())
	if err != nil || len(refs) != 8 {
		t.Fatalf("read-only version 1: %d pending refs, %v; want 8", len(refs), err)
	}
	if got, _ := pageAll(t, ro, gate.ListQuery{Agent: "a0", Limit: 2}); len(got) != 4 {
		t.Errorf("read-only version 1: %d approvals of a0, want 4", len(got))
	}
	ro.Close()

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.schema != SchemaVersion {
		t.Fatalf("schema %d after upgrade", s.schema)
	}
	refs, err = s.PendingRefs(context.Background())
	if err != nil || len(refs) != 8 || refs[0].Agent != all[0].Agent || refs[0].InputSize != int64(len(all[0].Input)) {
		t.Fatalf("upgraded: refs %+v, %v", refs, err)
	}
	if got, _ := pageAll(t, s, gate.ListQuery{Agent: "a0", Limit: 2}); len(got) != 4 {
		t.Errorf("upgraded: %d approvals of a0, want 4", len(got))
	}
	if b, _ := s.AgentBytes(context.Background()); b["a0"] == 0 {
		t.Errorf("upgraded: no bytes counted for a0: %v", b)
	}
}

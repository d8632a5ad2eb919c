package gate_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

// grouper is a GroupNotifier that keeps each message's latest view.
type grouper struct {
	mu    sync.Mutex
	seq   int
	shown int // Show calls
	views map[string]gate.View
}

func newGrouper() *grouper { return &grouper{views: map[string]gate.View{}} }

func (s *grouper) Name() string { return "grouper" }
func (s *grouper) Groups() bool { return true }

func (s *grouper) Show(_ context.Context, v gate.View) (gate.MessageRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.shown++
	id := fmt.Sprint(s.seq)
	s.views[id] = v
	return gate.MessageRef{ChatID: "c", MessageID: id}, nil
}

func (s *grouper) Update(_ context.Context, ref gate.MessageRef, v gate.View) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.views[ref.MessageID]; !ok {
		return gate.ErrMessageGone
	}
	s.views[ref.MessageID] = v
	return nil
}

// view returns message id's latest view.
func (s *grouper) view(id string) gate.View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.views[id]
}

func (s *grouper) shows() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shown
}

// waitView waits until message id's view satisfies cond.
func (s *grouper) waitView(t *testing.T, id, what string, cond func(gate.View) bool) gate.View {
	t.Helper()
	var v gate.View
	gatetest.Eventually(t, what, func() bool {
		v = s.view(id)
		return v.Approval != nil && cond(v)
	})
	return v
}

func batchIDs(v gate.View) string {
	if v.Batch == nil {
		return "none"
	}
	var ids []string
	for _, m := range v.Batch.Members {
		ids = append(ids, m.ID)
	}
	return fmt.Sprint(ids)
}

// TestBatchBindsToRenderedCalls: a second pending call of the session
// turns the first prompt into a grouped view; a press made on the view of
// two calls decides those two and never the third that arrived after it
// was rendered, which stays pending and is shown alone in the same message.
func TestBatchBindsToRenderedCalls(t *testing.T) {
	s := newGrouper()
	env := gatetest.New(t, gatetest.Options{Notifiers: []gate.Notifier{s}})
	ctx := context.Background()
	a1 := env.Ask(t, gatetest.Bash("make one"))
	msg := env.Shown(t, a1.ID, "grouper").Messages[0].MessageID
	a2 := env.Ask(t, gatetest.Bash("make two"))
	two := s.waitView(t, msg, "a view of two", func(v gate.View) bool { return len(v.Items) == 2 && v.Batch != nil })
	if want := fmt.Sprint([]string{a1.ID, a2.ID}); batchIDs(two) != want {
		t.Fatalf("batch %s, want %s", batchIDs(two), want)
	}
	if got := env.Shown(t, a2.ID, "grouper").Messages[0]; got.MessageID != msg || got.Group == "" {
		t.Fatalf("second call's message %+v, want the grouped view %s", got, msg)
	}

	a3 := env.Ask(t, gatetest.Bash("make three"))
	three := s.waitView(t, msg, "a view of three", func(v gate.View) bool { return len(v.Items) == 3 })
	if three.Batch == nil || three.Batch.ID == two.Batch.ID || len(three.Batch.Members) != 3 {
		t.Fatalf("the view of three calls has batch %+v, want a new batch of 3", three.Batch)
	}

	// The press on the view as it was with two calls.
	rs, err := env.G.DecideBatch(ctx, two.Batch.ID, two.Batch.Digest(), gate.Decision{Approve: true, By: "ana", Via: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Result != gate.BatchDecided || rs[1].Result != gate.BatchDecided {
		t.Fatalf("results %+v, want two decided", rs)
	}
	if got := env.Get(t, a3.ID); got.Status != gate.StatusPending {
		t.Fatalf("the call that arrived after the rendering is %s, want pending", got.Status)
	}
	for _, id := range []string{a1.ID, a2.ID} {
		if got := env.Get(t, id); got.Status != gate.StatusApproved || got.DecidedBy != "ana" {
			t.Errorf("%s: %s by %q, want approved by ana", id, got.Status, got.DecidedBy)
		}
	}
	one := s.waitView(t, msg, "one call left", func(v gate.View) bool { return v.Batch == nil && v.Approval.ID == a3.ID })
	if len(one.Items) != 3 {
		t.Errorf("the view lists %d calls, want all 3 (two with outcomes)", len(one.Items))
	}

	// The same press again: both already decided, a3 still untouched.
	rs, err = env.G.DecideBatch(ctx, two.Batch.ID, two.Batch.Digest(), gate.Decision{By: "bob", Via: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Result != gate.BatchAlreadyDecided || r.Approval.DecidedBy != "ana" {
			t.Errorf("repeat press: %s %s by %q", r.ID, r.Result, r.Approval.DecidedBy)
		}
	}
	if _, err := env.G.Decide(ctx, a3.ID, gate.Decision{By: "ana", Via: "test"}); err != nil {
		t.Fatal(err)
	}
	s.waitView(t, msg, "every outcome", func(v gate.View) bool {
		for _, it := range v.Items {
			if !it.Status.Final() {
				return false
			}
		}
		return len(v.Items) == 3
	})
	gatetest.Eventually(t, "the batches pruned", func() bool {
		_, err := env.G.Batch(ctx, three.Batch.ID)
		return errors.Is(err, gate.ErrNotFound)
	})
	if n := s.shows(); n != 1 {
		t.Errorf("%d messages sent for one session's three calls, want 1", n)
	}
}

// TestBatchDigestBound: a batch press with the wrong batch digest decides
// nothing; DecideMany decides each call only for its own digest and says
// per call what happened.
func TestBatchDigestBound(t *testing.T) {
	env := gatetest.New(t, gatetest.Options{})
	ctx := context.Background()
	a1 := env.Ask(t, gatetest.Bash("make one"))
	a2 := env.Ask(t, gatetest.Bash("make two"))
	d := gate.Decision{By: "ana", Via: "test", Reason: "no"}
	rs, err := env.G.DecideMany(ctx, []gate.BatchMember{
		{ID: a1.ID, Digest: a1.Digest},
		{ID: a2.ID, Digest: "0000000000000000"},
		{ID: "nosuchapproval", Digest: "0000000000000000"},
	}, d)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{gate.BatchDecided, gate.BatchDigestMismatch, gate.BatchNotFound}
	for i, r := range rs {
		if r.Result != want[i] {
			t.Errorf("call %d: %s, want %s", i, r.Result, want[i])
		}
	}
	if got := env.Get(t, a2.ID); got.Status != gate.StatusPending {
		t.Errorf("the call with the wrong digest is %s", got.Status)
	}
	for _, bad := range [][]gate.BatchMember{
		nil,
		{{ID: a2.ID}},
		{{ID: a2.ID, Digest: a2.Digest}, {ID: a2.ID, Digest: a2.Digest}},
	} {
		if _, err := env.G.DecideMany(ctx, bad, d); !errors.Is(err, gate.ErrInvalid) {
			t.Errorf("DecideMany(%v): %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := env.G.DecideMany(ctx, []gate.BatchMember{{ID: a2.ID, Digest: a2.Digest}},
		gate.Decision{Approve: true, Always: true, By: "ana"}); !errors.Is(err, gate.ErrInvalid) {
		t.Errorf("Always in a batch: %v, want ErrInvalid", err)
	}
	if got := env.Get(t, a2.ID); got.Status != gate.StatusPending {
		t.Errorf("a refused batch decided %s", got.Status)
	}
	if _, err := env.G.DecideBatch(ctx, "nosuchbatch", "0000000000000000", d); !errors.Is(err, gate.ErrNotFound) {
		t.Errorf("unknown batch: %v", err)
	}
	// Every decision is audited per call, with the actor.
	es, err := env.G.Audit(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range es {
		if e.Event == "decided" && e.ApprovalID == a1.ID && e.By == "ana" {
			found = true
		}
	}
	if !found {
		t.Error("no audit entry for the batch-decided call")
	}
}

// TestBatchOverflowShownAlone: past MaxBatch pending calls, a session's
// further calls get prompts of their own, so none is ever unshown.
func TestBatchOverflowShownAlone(t *testing.T) {
	s := newGrouper()
	env := gatetest.New(t, gatetest.Options{Notifiers: []gate.Notifier{s}})
	var ids []string
	for i := range gate.MaxBatch + 2 {
		a := env.Ask(t, gatetest.Bash(fmt.Sprintf("make t%d", i)))
		ids = append(ids, a.ID)
	}
	msgs := map[string]bool{}
	for _, id := range ids {
		msgs[env.Shown(t, id, "grouper").Messages[0].MessageID] = true
	}
	if len(msgs) != 3 {
		t.Errorf("%d messages for %d calls, want 3 (one view of %d, two alone)", len(msgs), len(ids), gate.MaxBatch)
	}
}

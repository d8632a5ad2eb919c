package gate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

func agentCall(agent, command string) gate.Call {
	c := gatetest.Bash(command)
	c.Agent = agent
	return c
}

// TestMaxPendingPerAgent: an agent at its cap gets ErrTooMany, and nothing
// is stored or audited for the refused call; other agents are not held
// back; a decision frees a place. Racing submits never overshoot.
func TestMaxPendingPerAgent(t *testing.T) {
	env := gatetest.New(t, gatetest.Options{Config: gate.Config{MaxPending: 3}})
	ctx := context.Background()
	var mine []*gate.Approval
	for i := range 3 {
		mine = append(mine, env.Ask(t, agentCall("greedy", fmt.Sprintf("make a%d", i))))
	}
	before, _ := env.Store.ListAudit(ctx, 0, 0)
	if _, err := env.G.Submit(ctx, agentCall("greedy", "make a3")); !errors.Is(err, gate.ErrTooMany) {
		t.Fatalf("4th pending call: %v, want ErrTooMany", err)
	}
	after, _ := env.Store.ListAudit(ctx, 0, 0)
	if len(after) != len(before) {
		t.Errorf("the refused call was audited: %d entries, were %d", len(after), len(before))
	}
	env.Ask(t, agentCall("other", "make b0"))
	if _, err := env.G.Decide(ctx, mine[0].ID, gate.Decision{Approve: true, By: "ana", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	env.Ask(t, agentCall("greedy", "make a4"))

	// Racing: 20 submits for 3 places left of a new agent.
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := env.G.Submit(ctx, agentCall("racer", fmt.Sprintf("make r%d", i)))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, gate.ErrTooMany):
				refused++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok != 3 || refused != 17 {
		t.Errorf("racing submits: %d stored, %d refused; want 3 and 17", ok, refused)
	}
}

// TestMaxStoredBytesPerAgent: an agent whose stored input would pass its
// byte cap is refused, decided approvals still count until pruned, and
// pruning frees the bytes.
func TestMaxStoredBytesPerAgent(t *testing.T) {
	env := gatetest.New(t, gatetest.Options{Config: gate.Config{MaxStoredBytes: 300, Retention: time.Hour, Timeout: time.Minute}})
	ctx := context.Background()
	long := "make " + strings.Repeat("x", 100) // about 120 bytes of input
	a := env.Ask(t, agentCall("big", long+"1"))
	b := env.Ask(t, agentCall("big", long+"2"))
	if _, err := env.G.Submit(ctx, agentCall("big", long+"3")); !errors.Is(err, gate.ErrTooMany) {
		t.Fatalf("third large call: %v, want ErrTooMany", err)
	}
	if _, err := env.G.Decide(ctx, a.ID, gate.Decision{Approve: true, By: "ana", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.G.Submit(ctx, agentCall("big", long+"3")); !errors.Is(err, gate.ErrTooMany) {
		t.Fatalf("a decided approval's input is still stored: %v, want ErrTooMany", err)
	}
	if _, err := env.G.Cancel(ctx, b.ID, ""); err != nil {
		t.Fatal(err)
	}
	if n, err := env.G.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("Prune within retention = %d, %v; want 0", n, err)
	}
	env.Clock.Advance(2 * time.Hour) // both are past retention
	if _, err := env.G.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{a.ID, b.ID} {
		if _, err := env.G.Get(ctx, id); !errors.Is(err, gate.ErrNotFound) {
			t.Errorf("pruned approval: %v, want ErrNotFound", err)
		}
	}
	env.Ask(t, agentCall("big", long+"3"))
	if n, err := env.G.VerifyAudit(ctx); err != nil || n == 0 {
		t.Errorf("audit after pruning: %d, %v", n, err)
	}
}

// slowList is a store whose first page read waits until released, as a
// large store's read does.
type slowList struct {
	gate.Store
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *slowList) ListApprovalsPage(ctx context.Context, q gate.ListQuery) (gate.Page, error) {
	p, err := s.Store.ListApprovalsPage(ctx, q)
	s.once.Do(func() { close(s.started) })
	<-s.release
	return p, err
}

// TestSubscribeReplayOutsideLock: while a subscriber's replay is read, the
// gate still takes and decides calls; events from that time are merged
// after the replay without repeats, and no approval is "resolved" before
// it was "required".
func TestSubscribeReplayOutsideLock(t *testing.T) {
	env := gatetest.New(t, gatetest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	old := env.Ask(t, gatetest.Bash("make old"))
	gone := env.Ask(t, gatetest.Bash("make gone"))

	// A second gate on the same memstore, whose replay reads are slow.
	slow := &slowList{Store: env.Store, started: make(chan struct{}), release: make(chan struct{})}
	env2 := gatetest.New(t, gatetest.Options{Store: slow})
	ch := env2.G.Subscribe(ctx)
	<-slow.started
	// The replay is being read: submits and decisions go on.
	fresh := env2.Ask(t, gatetest.Bash("make fresh"))
	if _, err := env2.G.Decide(ctx, old.ID, gate.Decision{Approve: true, By: "ana", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	close(slow.release)
	var got []string
	want := []string{
		"approval_required " + old.ID, "approval_required " + gone.ID, // the replay, read before the decision
		"approval_required " + fresh.ID, "approval_resolved " + old.ID,
	}
	for len(got) < len(want) {
		select {
		case e := <-ch:
			got = append(got, e.Type+" "+e.Approval.ID)
		case <-time.After(10 * time.Second):
			t.Fatalf("events %v, want %v", got, want)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %v\nwant %v", got, want)
	}
}

// TestReplayOfStalledSubscriberBlocksNoOne: replay pages are read one at a
// time across subscribers, but the turn is held only while a page is read:
// a subscriber that never takes its events does not hold up another's
// replay.
func TestReplayOfStalledSubscriberBlocksNoOne(t *testing.T) {
	env := gatetest.New(t, gatetest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 250 // more than two replay pages
	for i := range n {
		env.Ask(t, gatetest.Bash(fmt.Sprintf("make step%d", i)))
	}
	stalled := env.G.Subscribe(ctx)
	<-stalled // it read its first page and waits on its consumer
	ch := env.G.Subscribe(ctx)
	for got := 0; got < n; got++ {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("replay stopped after %d of %d events behind a stalled subscriber", got, n)
		}
	}
}

package gate_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

// screen is a Notifier that keeps what it shows like a chat does, and can
// hold its first Show until released, so a test controls what is queued.
type screen struct {
	hold    chan struct{} // nil: never hold
	holding chan struct{} // closed when the first Show is held

	mu       sync.Mutex
	once     sync.Once
	order    []string                  // approval ids in the order they were shown
	messages map[string]*gate.Approval // message id → what it shows
	seq      int
	restarts int
}

func newScreen(hold bool) *screen {
	s := &screen{messages: map[string]*gate.Approval{}, holding: make(chan struct{})}
	if hold {
		s.hold = make(chan struct{})
	}
	return s
}

func (s *screen) Name() string { return "screen" }

func (s *screen) Show(ctx context.Context, v gate.View) (gate.MessageRef, error) {
	if s.hold != nil {
		s.once.Do(func() {
			close(s.holding)
			select {
			case <-s.hold:
			case <-ctx.Done():
			}
		})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	id := fmt.Sprint(s.seq)
	s.messages[id] = v.Approval
	s.order = append(s.order, v.Approval.ID)
	return gate.MessageRef{ChatID: "c", MessageID: id}, nil
}

func (s *screen) Update(_ context.Context, ref gate.MessageRef, v gate.View) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.messages[ref.MessageID]; !ok {
		return gate.ErrMessageGone
	}
	if !v.Restarted.IsZero() {
		s.restarts++
	}
	s.order = append(s.order, "u:"+v.Approval.ID)
	s.messages[ref.MessageID] = v.Approval
	return nil
}

// live returns the ids of approvals shown with live buttons (pending).
func (s *screen) live() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, a := range s.messages {
		if !a.Status.Final() {
			out[a.ID] = true
		}
	}
	return out
}

func (s *screen) showing(id string) *gate.Approval {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.messages {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// TestDecidedWhileQueuedNeverShowsLiveButtons: a call decided while its
// prompt waits in the queue is dropped; a call decided while its prompt is
// being sent ends up showing the outcome.
func TestDecidedWhileQueuedNeverShowsLiveButtons(t *testing.T) {
	s := newScreen(true)
	env := gatetest.New(t, gatetest.Options{Notifiers: []gate.Notifier{s}})
	ctx := context.Background()
	sending := env.Ask(t, gatetest.Bash("make one"))
	<-s.holding // its Show is in progress
	queued := env.Ask(t, gatetest.Bash("make two"))
	for _, id := range []string{sending.ID, queued.ID} {
		if _, err := env.G.Decide(ctx, id, gate.Decision{Approve: true, By: "bob", Via: "cli"}); err != nil {
			t.Fatal(err)
		}
	}
	close(s.hold)
	gatetest.Eventually(t, "the outcome on the sent prompt", func() bool {
		a := s.showing(sending.ID)
		return a != nil && a.Status == gate.StatusApproved
	})
	next := env.Ask(t, gatetest.Bash("make three")) // queued behind everything above
	env.Shown(t, next.ID, "screen")
	if a := s.showing(queued.ID); a != nil {
		t.Errorf("the call decided while queued was shown: %s", a.Status)
	}
	if live := s.live(); len(live) != 1 || !live[next.ID] {
		t.Errorf("live prompts %v, want only %s", live, next.ID)
	}
}

// TestNewPromptsBeforeRefreshes: after a restart, a new prompt is shown
// before the refreshes of the old ones still queued.
func TestNewPromptsBeforeRefreshes(t *testing.T) {
	first := newScreen(false)
	env := gatetest.New(t, gatetest.Options{Notifiers: []gate.Notifier{first}})
	var old []string
	for i := range 5 {
		a := env.Ask(t, gatetest.Bash(fmt.Sprintf("make old%d", i)))
		env.Shown(t, a.ID, "screen")
		old = append(old, a.ID)
	}
	env.G.Close()

	// The first old prompt's message is gone: it is shown anew, held there.
	s := newScreen(true)
	s.messages = map[string]*gate.Approval{}
	for id, a := range first.messages {
		if a.ID != old[0] {
			s.messages[id] = a
		}
	}
	s.seq = 100
	env2 := gatetest.New(t, gatetest.Options{Store: env.Store, Notifiers: []gate.Notifier{s}, NoStart: true})
	if err := env2.G.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-s.holding // refreshing: the old prompt is being shown again
	fresh := env2.Ask(t, gatetest.Bash("make new"))
	close(s.hold)
	gatetest.Eventually(t, "every prompt", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.order) == 6 && s.restarts == 4
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	want := []string{old[0], fresh.ID, "u:" + old[1], "u:" + old[2], "u:" + old[3], "u:" + old[4]}
	if fmt.Sprint(s.order) != fmt.Sprint(want) {
		t.Errorf("order %v, want %v (the new prompt ahead of the refreshes)", s.order, want)
	}
}

// TestNotifierQueueStopsOnClose: the queue's goroutine ends with the gate,
// even with a Show in progress.
func TestNotifierQueueStopsOnClose(t *testing.T) {
	base := runtime.NumGoroutine()
	for range 10 {
		s := newScreen(true)
		env := gatetest.New(t, gatetest.Options{Notifiers: []gate.Notifier{s}})
		env.Ask(t, gatetest.Bash("make"))
		<-s.holding
		env.G.Close() // returns only once the queue has exited
	}
	gatetest.Eventually(t, "goroutines to settle", func() bool { return runtime.NumGoroutine() <= base+2 })
}

// TestRefSavedWhenClosingDuringShow: a prompt whose send finishes while
// the gate closes keeps its message reference, so the restarted daemon
// edits that message instead of sending a second one.
func TestRefSavedWhenClosingDuringShow(t *testing.T) {
	s := newScreen(true)
	env := gatetest.New(t, gatetest.Options{Notifiers: []gate.Notifier{s}})
	a := env.Ask(t, gatetest.Bash("make"))
	<-s.holding
	env.G.Close() // cancels the queue's context while Show is under way
	got, err := env.Store.GetApproval(context.Background(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || got.Messages[0].Frontend != "screen" {
		t.Fatalf("message refs after close: %+v, want the one sent", got.Messages)
	}
}

package gate

import (
	"context"
	"sync"
)

// maxSubscriberBacklog is how many events a subscriber may fall behind
// before it is dropped (its channel closed; it reconnects and gets a replay).
const maxSubscriberBacklog = 10000

// subscriber is one Subscribe call: an unbounded-up-to-a-limit queue drained
// into out by its own goroutine, so publishing never blocks the gate.
type subscriber struct {
	mu      sync.Mutex
	queue   []Event
	closed  bool
	signal  chan struct{}
	out     chan Event
	stopped chan struct{}
}

func newSubscriber() *subscriber {
	return &subscriber{signal: make(chan struct{}, 1), out: make(chan Event), stopped: make(chan struct{})}
}

// push queues e; it reports false if the subscriber is too far behind.
func (s *subscriber) push(e Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return true
	}
	if len(s.queue) >= maxSubscriberBacklog {
		return false
	}
	s.queue = append(s.queue, e)
	select {
	case s.signal <- struct{}{}:
	default:
	}
	return true
}

func (s *subscriber) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.stopped)
	}
}

func (s *subscriber) run(ctx context.Context) {
	defer close(s.out)
	for {
		s.mu.Lock()
		q := s.queue
		s.queue = nil
		s.mu.Unlock()
		for _, e := range q {
			select {
			case s.out <- e:
			case <-ctx.Done():
				return
			case <-s.stopped:
				return
			}
		}
		select {
		case <-s.signal:
		case <-ctx.Done():
			return
		case <-s.stopped:
			// Dropped or the gate closed: end the stream at once (a consumer
			// that stopped reading must not keep this goroutine); a new
			// subscription replays what is pending.
			return
		}
	}
}

// Subscribe returns a channel of events. Every pending approval is sent
// first as approval_required (replay), then live events. The channel is
// closed when ctx ends or the gate closes. A subscriber too slow to keep up
// is dropped (its channel closed) rather than blocking the gate.
func (g *Gate) Subscribe(ctx context.Context) <-chan Event {
	s := newSubscriber()
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		close(s.out)
		return s.out
	}
	// Listing under the lock orders the replay before any live event, so a
	// subscriber never sees "resolved" before "required" for one approval.
	pending, err := g.store.ListApprovals(ctx, StatusPending)
	if err != nil {
		g.logger.Error("subscribe: list pending failed", "err", err)
	}
	for _, a := range pending {
		s.push(Event{Type: EventApprovalRequired, Approval: a})
	}
	g.subs[s] = struct{}{}
	g.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
		case <-s.stopped:
		}
		g.mu.Lock()
		delete(g.subs, s)
		g.mu.Unlock()
		s.close()
	}()
	go s.run(ctx)
	return s.out
}

// publishLocked hands e to every subscriber; g.mu must be held.
func (g *Gate) publishLocked(e Event) {
	for s := range g.subs {
		if !s.push(e) {
			g.logger.Warn("dropping a subscriber that fell behind")
			delete(g.subs, s)
			s.close()
		}
	}
}

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
// While its replay is read from the store (outside the gate's lock), live
// events are held aside and merged after it (see replayed).
type subscriber struct {
	mu        sync.Mutex
	queue     []Event
	replaying bool
	held      []Event
	closed    bool
	signal    chan struct{}
	out       chan Event
	stopped   chan struct{}
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
	if len(s.queue)+len(s.held) >= maxSubscriberBacklog {
		return false
	}
	if s.replaying {
		s.held = append(s.held, e)
		return true
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
//
// The replay is read from the store outside the gate's lock, so a new
// subscriber never stalls submits or decisions however much is pending:
// live events from the moment of subscribing are held and merged after
// the replay (see replayed), which keeps the promise that a subscriber
// never sees "resolved" before "required" for one approval.
func (g *Gate) Subscribe(ctx context.Context) <-chan Event {
	return g.subscribe(ctx, true)
}

// SubscribeLive is Subscribe without the replay: live events only, for a
// consumer that needs no list of what is pending (metrics).
func (g *Gate) SubscribeLive(ctx context.Context) <-chan Event {
	return g.subscribe(ctx, false)
}

func (g *Gate) subscribe(ctx context.Context, replay bool) <-chan Event {
	s := newSubscriber()
	s.replaying = replay
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		close(s.out)
		return s.out
	}
	g.subs[s] = struct{}{}
	g.mu.Unlock()
	if replay {
		pending, err := g.store.ListApprovals(ctx, StatusPending)
		if err != nil && ctx.Err() == nil {
			g.logger.Error("subscribe: list pending failed", "err", err)
		}
		s.replayed(pending)
	}
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

// replayed queues the replay (pending, read after the subscriber was
// registered) followed by the live events held meanwhile: a held
// "required" for an approval the replay has is a repeat and dropped; a
// held "resolved" for an approval the subscriber was never told of
// (decided before the read) is dropped too.
func (s *subscriber) replayed(pending []*Approval) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[string]bool, len(pending))
	q := make([]Event, 0, len(pending)+len(s.held))
	for _, a := range pending {
		seen[a.ID] = true
		q = append(q, Event{Type: EventApprovalRequired, Approval: a})
	}
	inReplay := func(id string) bool { return seen[id] }
	told := map[string]bool{}
	for _, e := range s.held {
		id := e.Approval.ID
		switch e.Type {
		case EventApprovalRequired:
			if inReplay(id) {
				continue
			}
			told[id] = true
		case EventApprovalResolved:
			if !inReplay(id) && !told[id] {
				continue
			}
		}
		q = append(q, e)
	}
	s.queue = append(q, s.queue...)
	s.held, s.replaying = nil, false
	select {
	case s.signal <- struct{}{}:
	default:
	}
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

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
// While its replay is read from the store, a page at a time by its own
// goroutine, live events are held aside and merged after it (see
// runReplay).
type subscriber struct {
	replay    func(ctx context.Context, after uint64) (Page, error) // nil: no replay
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
	if s.replay != nil && !s.runReplay(ctx) {
		return
	}
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
// The replay is read from the store by the subscriber's own goroutine, a
// page at a time as the consumer takes it, never under the gate's lock: a
// new subscriber does not stall submits or decisions however much is
// pending, and one that leaves early costs only the pages it read. Live
// events from the moment of subscribing are held and merged after the
// replay (see runReplay), which keeps the promise that a subscriber never
// sees "resolved" before "required" for one approval.
func (g *Gate) Subscribe(ctx context.Context) <-chan Event {
	return g.subscribe(ctx, true)
}

// SubscribeLive is Subscribe without the replay: live events only, for a
// consumer that needs no list of what is pending (metrics).
func (g *Gate) SubscribeLive(ctx context.Context) <-chan Event {
	return g.subscribe(ctx, false)
}

// replayPage is the size of one replay read.
const replayPage = 100

func (g *Gate) subscribe(ctx context.Context, replay bool) <-chan Event {
	s := newSubscriber()
	if replay {
		s.replaying = true
		s.replay = func(ctx context.Context, after uint64) (Page, error) {
			select {
			case g.replays <- struct{}{}:
				defer func() { <-g.replays }()
			case <-ctx.Done():
				return Page{}, ctx.Err()
			}
			return g.store.ListApprovalsPage(ctx, ListQuery{Status: StatusPending, After: after, Limit: replayPage, MaxBytes: DefaultPageBytes})
		}
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		close(s.out)
		return s.out
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

// runReplay sends the pending approvals, read a page at a time after the
// subscriber was registered, then queues the live events held meanwhile:
// a held "required" for an approval the replay sent is a repeat and
// dropped, and so is a held "resolved" for an approval the subscriber was
// never told of (decided before its page was read). It reports false if
// the subscriber ended.
func (s *subscriber) runReplay(ctx context.Context) bool {
	seen := map[string]bool{}
	var after uint64
	for {
		page, err := s.replay(ctx, after)
		if err != nil {
			break // the live events still follow; a new subscription replays again
		}
		for _, a := range page.Approvals {
			seen[a.ID] = true
			select {
			case s.out <- Event{Type: EventApprovalRequired, Approval: a}:
			case <-ctx.Done():
				return false
			case <-s.stopped:
				return false
			}
		}
		if page.Next == 0 {
			break
		}
		after = page.Next
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	told := map[string]bool{}
	q := make([]Event, 0, len(s.held)+len(s.queue))
	for _, e := range s.held {
		id := e.Approval.ID
		switch e.Type {
		case EventApprovalRequired:
			if seen[id] {
				continue
			}
			told[id] = true
		case EventApprovalResolved:
			if !seen[id] && !told[id] {
				continue
			}
		}
		q = append(q, e)
	}
	s.queue = append(q, s.queue...)
	s.held, s.replaying = nil, false
	return true
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

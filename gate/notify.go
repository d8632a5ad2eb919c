package gate

import (
	"context"
	"log/slog"
	"sync"
)

// notifierQueue feeds one Notifier from its own goroutine, in order, so a
// slow frontend never blocks the gate or another frontend, and a burst of
// prompts is queued, never dropped.
type notifierQueue struct {
	n      Notifier
	logger *slog.Logger
	done   <-chan struct{}

	mu      sync.Mutex
	queue   []notifyJob
	started bool
	signal  chan struct{}
	exited  chan struct{}
}

type notifyJob struct {
	resolved bool
	a        *Approval
}

func newNotifierQueue(n Notifier, logger *slog.Logger, done <-chan struct{}) *notifierQueue {
	return &notifierQueue{n: n, logger: logger.With("frontend", n.Name()), done: done,
		signal: make(chan struct{}, 1), exited: make(chan struct{})}
}

func (q *notifierQueue) start() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.started {
		q.started = true
		go q.run()
	}
}

// wait returns once the queue's goroutine has exited (after the gate closed).
func (q *notifierQueue) wait() {
	q.mu.Lock()
	started := q.started
	q.mu.Unlock()
	if started {
		<-q.exited
	}
}

func (q *notifierQueue) push(j notifyJob) {
	q.mu.Lock()
	q.queue = append(q.queue, j)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *notifierQueue) run() {
	defer close(q.exited)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-q.done
		cancel()
	}()
	for {
		q.mu.Lock()
		jobs := q.queue
		q.queue = nil
		q.mu.Unlock()
		for _, j := range jobs {
			var err error
			if j.resolved {
				err = q.n.Resolved(ctx, j.a)
			} else {
				err = q.n.Notify(ctx, j.a)
			}
			if err != nil && ctx.Err() == nil {
				q.logger.Error("frontend failed", "approval", j.a.ID, "resolved", j.resolved, "err", err)
			}
		}
		select {
		case <-q.signal:
		case <-ctx.Done():
			return
		}
	}
}

// notify tells every frontend about a pending approval.
func (g *Gate) notify(a *Approval) {
	g.mu.Lock()
	qs := g.notifiers
	g.mu.Unlock()
	for _, q := range qs {
		q.push(notifyJob{a: a})
	}
}

// resolved tells every frontend about a final approval.
func (g *Gate) resolved(a *Approval) {
	g.mu.Lock()
	qs := g.notifiers
	g.mu.Unlock()
	for _, q := range qs {
		q.push(notifyJob{resolved: true, a: a})
	}
}

package gate

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"approvalbot/backoff"
)

// The prompt lifecycle: the gate shows every approval on every frontend
// and keeps each message current. One notifierQueue per frontend runs its
// jobs from one goroutine, in order, so a slow frontend never blocks the
// gate or another frontend. A job names an approval, not a snapshot of it:
// the queue re-reads the approval before acting, so
//
//   - a call decided while its prompt was queued is never sent with live
//     buttons (a never-shown final approval is dropped; a shown one is
//     edited to its outcome);
//   - an outcome is shown on every message the frontend has for the call,
//     including one whose reference was saved after the decision (the
//     decision queues a job behind the send that saved it);
//   - jobs for one approval coalesce: a burst of changes is one re-read.
//
// New prompts and outcomes go ahead of the refreshes a restart queues, so
// a long list of old prompts never delays a new one.

// notifierQueue feeds one Notifier.
type notifierQueue struct {
	n      Notifier
	g      *Gate
	logger *slog.Logger
	done   <-chan struct{}

	mu      sync.Mutex
	fresh   []string // new prompts and outcomes, first in first out
	refresh []string // prompts to refresh after a restart
	queued  map[string]*queuedJob
	started bool
	signal  chan struct{}
	exited  chan struct{}
}

// queuedJob is what is queued for one approval.
type queuedJob struct {
	fresh     bool      // in the fresh lane (else only in refresh)
	restarted time.Time // non-zero: refresh the prompt, the daemon restarted then
}

func newNotifierQueue(n Notifier, g *Gate, done <-chan struct{}) *notifierQueue {
	return &notifierQueue{n: n, g: g, logger: g.logger.With("frontend", n.Name()), done: done,
		queued: map[string]*queuedJob{}, signal: make(chan struct{}, 1), exited: make(chan struct{})}
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

// push queues a look at approval id: in the fresh lane, or (restarted set)
// as a refresh after a restart. A job already queued for id absorbs it.
func (q *notifierQueue) push(id string, restarted time.Time) {
	fresh := restarted.IsZero()
	q.mu.Lock()
	j, ok := q.queued[id]
	switch {
	case !ok:
		j = &queuedJob{fresh: fresh, restarted: restarted}
		q.queued[id] = j
		if fresh {
			q.fresh = append(q.fresh, id)
		} else {
			q.refresh = append(q.refresh, id)
		}
	case fresh && !j.fresh:
		j.fresh = true // its refresh-lane entry is skipped when reached
		q.fresh = append(q.fresh, id)
	case !fresh:
		j.restarted = restarted
	}
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pop takes the next job: the fresh lane first.
func (q *notifierQueue) pop() (string, queuedJob, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.fresh) > 0 {
		id := q.fresh[0]
		q.fresh = q.fresh[1:]
		if j, ok := q.queued[id]; ok {
			delete(q.queued, id)
			return id, *j, true
		}
	}
	for len(q.refresh) > 0 {
		id := q.refresh[0]
		q.refresh = q.refresh[1:]
		if j, ok := q.queued[id]; ok && !j.fresh {
			delete(q.queued, id)
			return id, *j, true
		}
	}
	return "", queuedJob{}, false
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
		for ctx.Err() == nil {
			id, j, ok := q.pop()
			if !ok {
				break
			}
			q.sync(ctx, id, j.restarted)
		}
		select {
		case <-q.signal:
		case <-ctx.Done():
			return
		}
	}
}

// sync brings the frontend's messages for approval id up to date with the
// approval as the store has it now.
func (q *notifierQueue) sync(ctx context.Context, id string, restarted time.Time) {
	log := q.logger.With("approval", id)
	a, err := q.g.store.GetApproval(ctx, id)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, ErrNotFound) {
			log.Error("read approval to show it", "err", err)
		}
		return
	}
	if q.groups() && q.syncGrouped(ctx, a, restarted) {
		return
	}
	var refs []MessageRef
	for _, m := range a.Messages {
		if m.Frontend == q.n.Name() {
			refs = append(refs, m)
		}
	}
	v := View{Approval: a}
	if a.Status.Final() {
		// Shown nowhere here: nothing to say (a decision while the prompt
		// was queued drops the send).
		for _, ref := range refs {
			q.update(ctx, ref, v)
		}
		return
	}
	if len(refs) > 0 {
		if restarted.IsZero() {
			return // already shown, nothing changed
		}
		v.Restarted = restarted
		live := 0
		for _, ref := range refs {
			if q.update(ctx, ref, v) {
				live++
			}
		}
		if live > 0 {
			return
		}
		log.Info("prompt message gone; showing it again")
	}
	v.Restarted = restarted
	ref, err := q.n.Show(ctx, v)
	if err != nil {
		if ctx.Err() == nil {
			log.Error("show prompt", "err", err)
		}
		return
	}
	// The message is out: its reference is saved even while the gate
	// closes (Close waits for this queue, so the store is still open), or
	// the restarted daemon would send a second message.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refSaveGrace)
	defer cancel()
	q.saveRef(sctx, id, ref)
}

// refSaveGrace bounds saving a sent message's reference after the gate
// began to close.
const refSaveGrace = 5 * time.Second

// update edits one message and reports whether it is still there.
func (q *notifierQueue) update(ctx context.Context, ref MessageRef, v View) bool {
	err := q.n.Update(ctx, ref, v)
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrMessageGone):
		return false
	case ctx.Err() == nil:
		q.logger.Error("update prompt", "approval", v.Approval.ID, "status", v.Approval.Status, "err", err)
	}
	return true
}

// saveRef records where the prompt went. The message is out; losing its
// reference would leave it unedited forever, so the write is retried
// while the gate runs.
func (q *notifierQueue) saveRef(ctx context.Context, id string, ref MessageRef) {
	ref.Frontend = q.n.Name()
	err := backoff.Retry(ctx, backoff.Default, func(ctx context.Context) error {
		_, err := q.g.AddMessageRef(ctx, id, ref)
		return err
	}, func(err error) bool { return errors.Is(err, ErrInvalid) || errors.Is(err, ErrNotFound) },
		func(err error, wait time.Duration) {
			q.logger.Error("record message ref; retrying", "approval", id, "retry_in", wait, "err", err)
		})
	if err != nil && ctx.Err() == nil {
		q.logger.Error("record message ref", "approval", id, "err", err)
	}
}

// notify tells every frontend about a new pending approval. (Start
// pushes the ones that waited through a restart.)
func (g *Gate) notify(a *Approval) {
	g.mu.Lock()
	qs := g.notifiers
	g.mu.Unlock()
	for _, q := range qs {
		q.push(a.ID, time.Time{})
	}
}

// resolved tells every frontend that an approval is final.
func (g *Gate) resolved(a *Approval) {
	g.mu.Lock()
	qs := g.notifiers
	g.mu.Unlock()
	for _, q := range qs {
		q.push(a.ID, time.Time{})
	}
}

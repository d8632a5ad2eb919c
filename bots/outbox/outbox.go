// Package outbox is the send queue the chat frontends share: it paces sends
// per destination (a chat, a channel) and overall to a platform's rate
// limits, retries a rate-limited send after the delay the platform asked
// for, retries other failures with capped exponential backoff, keeps the
// order of sends to one destination, and never drops a job: a job is
// retried until it succeeds, says its failure is permanent, or its context
// (or the outbox) ends.
//
// The platform packages hold their limits (bots/telegram names Telegram's
// with the documentation link) and wrap their API calls as jobs.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"approvalbot/backoff"
)

// ErrClosed is returned for jobs still queued when the outbox is closed.
var ErrClosed = errors.New("outbox closed")

// Limits are the pacing and retry settings. A zero duration means no limit.
type Limits struct {
	// PerDest is the minimum interval between two sends to one destination.
	PerDest time.Duration
	// Overall is the minimum interval between any two sends.
	Overall time.Duration
	// GroupMax sends at most to one group destination per GroupWindow
	// (0: no window limit).
	GroupMax    int
	GroupWindow time.Duration
	// BackoffMin and BackoffMax bound the exponential backoff after a
	// failure that names no delay (network errors, 5xx).
	BackoffMin, BackoffMax time.Duration
}

// Dest names where a job sends to. Jobs for one Key run one at a time, in
// the order they were enqueued.
type Dest struct {
	Key   string
	Group bool // a group chat: the GroupMax/GroupWindow limit applies too
}

// Job is one send. It returns nil on success, a *RetryAfter when the
// platform asked to wait, an error made with Permanent when retrying cannot
// help (a bad request), and any other error for a failure worth retrying.
type Job func(ctx context.Context) error

// RetryAfter is the error a job returns when the platform rate-limited it
// (Telegram's 429 with parameters.retry_after, Slack's Retry-After).
type RetryAfter struct {
	D   time.Duration
	Err error
}

func (e *RetryAfter) Error() string {
	return fmt.Sprintf("rate limited, retry after %s: %v", e.D, e.Err)
}

func (e *RetryAfter) Unwrap() error { return e.Err }

type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as a failure that retrying cannot fix; the outbox
// gives it back to the caller instead of retrying.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// Outbox runs jobs under Limits. It is safe for concurrent use.
type Outbox struct {
	lim    Limits
	logger *slog.Logger

	ctx    context.Context // ends on Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu          sync.Mutex
	closed      bool
	queues      map[string]*queue
	overallNext time.Time
	onFailure   func(retrying bool)
}

// OnFailure sets f to hear of every failed send: retrying is true when the
// outbox will try again, false when the failure is permanent. Metrics use
// it (frontend send errors and retries).
func (o *Outbox) OnFailure(f func(retrying bool)) {
	o.mu.Lock()
	o.onFailure = f
	o.mu.Unlock()
}

func (o *Outbox) failed(retrying bool) {
	o.mu.Lock()
	f := o.onFailure
	o.mu.Unlock()
	if f != nil {
		f(retrying)
	}
}

type queue struct {
	dest    Dest
	items   []*item
	running bool
	next    time.Time   // earliest time of the next send (pacing, retry_after)
	recent  []time.Time // send times within GroupWindow, oldest first
}

type item struct {
	ctx  context.Context
	job  Job
	done chan error
}

// New returns an outbox with limits l. Close it to stop its goroutines.
func New(l Limits, logger *slog.Logger) *Outbox {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if l.BackoffMin <= 0 {
		l.BackoffMin = 100 * time.Millisecond
	}
	if l.BackoffMax < l.BackoffMin {
		l.BackoffMax = l.BackoffMin
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Outbox{lim: l, logger: logger, ctx: ctx, cancel: cancel, queues: map[string]*queue{}}
}

// Enqueue queues job for d and returns a channel that receives its final
// result: nil, a permanent error, ctx's error, or ErrClosed. The job runs
// after every job enqueued earlier for the same d.Key.
func (o *Outbox) Enqueue(ctx context.Context, d Dest, job Job) <-chan error {
	it := &item{ctx: ctx, job: job, done: make(chan error, 1)}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		it.done <- ErrClosed
		return it.done
	}
	o.sweepLocked(time.Now())
	q := o.queues[d.Key]
	if q == nil {
		q = &queue{dest: d}
		o.queues[d.Key] = q
	}
	q.items = append(q.items, it)
	if !q.running {
		q.running = true
		o.wg.Add(1)
		go o.work(q)
	}
	return it.done
}

// Send enqueues job and waits for its result (see Enqueue).
func (o *Outbox) Send(ctx context.Context, d Dest, job Job) error {
	select {
	case err := <-o.Enqueue(ctx, d, job):
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the outbox: running jobs' contexts are cancelled, queued jobs
// get ErrClosed, and Close returns once every goroutine has ended.
func (o *Outbox) Close() error {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.cancel()
	o.wg.Wait()
	return nil
}

// sweepLocked forgets idle destinations whose pacing no longer matters.
func (o *Outbox) sweepLocked(now time.Time) {
	keep := max(o.lim.PerDest, o.lim.GroupWindow)
	for k, q := range o.queues {
		if q.running || len(q.items) > 0 {
			continue
		}
		if now.Sub(q.next) > keep && (len(q.recent) == 0 || now.Sub(q.recent[len(q.recent)-1]) > o.lim.GroupWindow) {
			delete(o.queues, k)
		}
	}
}

// work runs q's items in order until q is empty.
func (o *Outbox) work(q *queue) {
	defer o.wg.Done()
	for {
		o.mu.Lock()
		if len(q.items) == 0 || o.ctx.Err() != nil {
			q.running = false
			items := q.items
			q.items = nil
			o.mu.Unlock()
			for _, it := range items {
				it.done <- ErrClosed
			}
			return
		}
		it := q.items[0]
		q.items = q.items[1:]
		o.mu.Unlock()
		it.done <- o.run(q, it)
	}
}

// run retries one item until it is done.
func (o *Outbox) run(q *queue, it *item) error {
	ctx, cancel := context.WithCancel(it.ctx)
	defer cancel()
	stop := context.AfterFunc(o.ctx, cancel)
	defer stop()

	for attempt := 0; ; attempt++ {
		if err := o.pace(ctx, q); err != nil {
			return o.ended(err)
		}
		err := it.job(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return o.ended(ctx.Err())
		}
		if IsPermanent(err) {
			o.logger.Warn("outbox: send failed permanently", "dest", q.dest.Key, "err", err)
			o.failed(false)
			return err
		}
		o.failed(true)
		var ra *RetryAfter
		wait := o.backoff(attempt)
		if errors.As(err, &ra) {
			wait = ra.D
			o.logger.Info("outbox: rate limited", "dest", q.dest.Key, "retry_after", ra.D)
		} else {
			o.logger.Warn("outbox: send failed, retrying", "dest", q.dest.Key, "attempt", attempt+1, "in", wait, "err", err)
		}
		o.mu.Lock()
		if t := time.Now().Add(wait); t.After(q.next) {
			q.next = t
		}
		o.mu.Unlock()
	}
}

// ended maps a context error to ErrClosed when the outbox closed.
func (o *Outbox) ended(err error) error {
	if o.ctx.Err() != nil {
		return ErrClosed
	}
	return err
}

func (o *Outbox) backoff(attempt int) time.Duration {
	return backoff.Policy{Min: o.lim.BackoffMin, Max: o.lim.BackoffMax}.Delay(attempt)
}

// pace waits until q may send under every limit, and records the send.
func (o *Outbox) pace(ctx context.Context, q *queue) error {
	for {
		o.mu.Lock()
		now := time.Now()
		at := q.next
		if q.dest.Group && o.lim.GroupMax > 0 {
			// Forget sends that left the window.
			i := 0
			for i < len(q.recent) && now.Sub(q.recent[i]) >= o.lim.GroupWindow {
				i++
			}
			q.recent = q.recent[i:]
			if len(q.recent) >= o.lim.GroupMax {
				if t := q.recent[0].Add(o.lim.GroupWindow); t.After(at) {
					at = t
				}
			}
		}
		if !at.After(now) {
			// This destination may send now; take the next overall slot.
			slot := now
			if o.overallNext.After(slot) {
				slot = o.overallNext
			}
			if !slot.After(now) {
				o.overallNext = now.Add(o.lim.Overall)
				q.next = now.Add(o.lim.PerDest)
				if q.dest.Group && o.lim.GroupMax > 0 {
					q.recent = append(q.recent, now)
				}
				o.mu.Unlock()
				return nil
			}
			at = slot
		}
		o.mu.Unlock()
		if err := backoff.Sleep(ctx, at.Sub(now)); err != nil {
			return err
		}
	}
}

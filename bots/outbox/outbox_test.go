package outbox

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

// recorder records when each job ran.
type recorder struct {
	mu    sync.Mutex
	times []time.Time
	names []int
}

func (r *recorder) job(n int, fail func(call int) error) Job {
	call := 0
	return func(ctx context.Context) error {
		r.mu.Lock()
		r.times = append(r.times, time.Now())
		r.names = append(r.names, n)
		r.mu.Unlock()
		call++
		if fail != nil {
			return fail(call)
		}
		return nil
	}
}

func (r *recorder) snapshot() ([]time.Time, []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.times...), append([]int(nil), r.names...)
}

func newTest(t *testing.T, l Limits) *Outbox {
	t.Helper()
	o := New(l, nil)
	t.Cleanup(func() { o.Close() })
	return o
}

func TestOrderAndPacingPerDest(t *testing.T) {
	const gap = 5 * time.Millisecond
	o := newTest(t, Limits{PerDest: gap})
	var r recorder
	var dones []<-chan error
	for i := range 30 {
		dones = append(dones, o.Enqueue(t.Context(), Dest{Key: "chat"}, r.job(i, nil)))
	}
	for i, d := range dones {
		if err := <-d; err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	times, names := r.snapshot()
	for i, n := range names {
		if n != i {
			t.Fatalf("order: position %d ran job %d", i, n)
		}
	}
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d < gap-gap/10 {
			t.Errorf("jobs %d and %d only %s apart, want >= %s", i-1, i, d, gap)
		}
	}
}

// The pacing tests read the times the jobs saw, a few microseconds after
// the outbox's own clock reading; they allow a tenth of the gap for that.
func TestOverallPacing(t *testing.T) {
	const gap = 5 * time.Millisecond
	o := newTest(t, Limits{Overall: gap})
	var r recorder
	var dones []<-chan error
	for i := range 20 {
		dones = append(dones, o.Enqueue(t.Context(), Dest{Key: string(rune('a' + i%4))}, r.job(i, nil)))
	}
	for _, d := range dones {
		if err := <-d; err != nil {
			t.Fatal(err)
		}
	}
	times, _ := r.snapshot()
	sortTimes(times)
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d < gap-gap/10 {
			t.Errorf("sends %d and %d only %s apart, want >= %s", i-1, i, d, gap)
		}
	}
}

func sortTimes(ts []time.Time) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].Before(ts[j-1]); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

func TestGroupWindow(t *testing.T) {
	const window = 60 * time.Millisecond
	o := newTest(t, Limits{GroupMax: 3, GroupWindow: window})
	var r recorder
	var dones []<-chan error
	for i := range 7 {
		dones = append(dones, o.Enqueue(t.Context(), Dest{Key: "-100", Group: true}, r.job(i, nil)))
	}
	for _, d := range dones {
		if err := <-d; err != nil {
			t.Fatal(err)
		}
	}
	times, _ := r.snapshot()
	for i := 3; i < len(times); i++ {
		if d := times[i].Sub(times[i-3]); d < window {
			t.Errorf("sends %d and %d within %s, want 3 per %s", i-3, i, d, window)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	o := newTest(t, Limits{BackoffMin: time.Hour}) // a backoff would hang: only retry_after may be used
	var r recorder
	const wait = 30 * time.Millisecond
	err := o.Send(t.Context(), Dest{Key: "c"}, r.job(0, func(call int) error {
		if call == 1 {
			return &RetryAfter{D: wait, Err: errors.New("Too Many Requests")}
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	times, _ := r.snapshot()
	if len(times) != 2 {
		t.Fatalf("%d calls, want 2", len(times))
	}
	if d := times[1].Sub(times[0]); d < wait {
		t.Errorf("retried after %s, want >= %s", d, wait)
	}
}

func TestBackoffRetriesNetworkErrors(t *testing.T) {
	o := newTest(t, Limits{BackoffMin: 2 * time.Millisecond, BackoffMax: 8 * time.Millisecond})
	var r recorder
	err := o.Send(t.Context(), Dest{Key: "c"}, r.job(0, func(call int) error {
		if call <= 5 {
			return errors.New("connection reset")
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	times, _ := r.snapshot()
	if len(times) != 6 {
		t.Fatalf("%d calls, want 6", len(times))
	}
	want := []time.Duration{2, 4, 8, 8, 8}
	for i, w := range want {
		if d := times[i+1].Sub(times[i]); d < w*time.Millisecond {
			t.Errorf("retry %d after %s, want >= %s", i+1, d, w*time.Millisecond)
		}
	}
}

func TestPermanentIsReturnedAndQueueGoesOn(t *testing.T) {
	o := newTest(t, Limits{})
	var r recorder
	bad := errors.New("Bad Request: can't parse entities")
	d1 := o.Enqueue(t.Context(), Dest{Key: "c"}, r.job(0, func(int) error { return Permanent(bad) }))
	d2 := o.Enqueue(t.Context(), Dest{Key: "c"}, r.job(1, nil))
	if err := <-d1; !errors.Is(err, bad) || !IsPermanent(err) {
		t.Fatalf("first job: %v, want the permanent error", err)
	}
	if err := <-d2; err != nil {
		t.Fatalf("second job: %v", err)
	}
	if _, names := r.snapshot(); len(names) != 2 {
		t.Fatalf("calls %v, want one each", names)
	}
}

func TestContextEndsRetries(t *testing.T) {
	o := newTest(t, Limits{BackoffMin: time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	calls := make(chan struct{}, 100)
	done := o.Enqueue(ctx, Dest{Key: "c"}, func(context.Context) error {
		select {
		case calls <- struct{}{}:
		default:
		}
		return errors.New("down")
	})
	<-calls
	<-calls
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestDestinationsIndependent(t *testing.T) {
	o := newTest(t, Limits{})
	release := make(chan struct{})
	blocked := o.Enqueue(t.Context(), Dest{Key: "a"}, func(ctx context.Context) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if err := o.Send(t.Context(), Dest{Key: "b"}, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("b blocked behind a: %v", err)
	}
	close(release)
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
}

func TestCloseFailsQueuedAndLeaksNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	o := New(Limits{PerDest: time.Hour}, nil)
	started := make(chan struct{})
	first := o.Enqueue(t.Context(), Dest{Key: "c"}, func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	})
	<-started
	var queued []<-chan error
	for range 5 {
		queued = append(queued, o.Enqueue(t.Context(), Dest{Key: "c"}, func(context.Context) error { return nil }))
	}
	other := o.Enqueue(t.Context(), Dest{Key: "d"}, func(context.Context) error { return errors.New("fail") })
	o.Close()
	if err := <-first; !errors.Is(err, ErrClosed) {
		t.Errorf("running job: %v, want ErrClosed", err)
	}
	for _, q := range queued {
		if err := <-q; !errors.Is(err, ErrClosed) {
			t.Errorf("queued job: %v, want ErrClosed", err)
		}
	}
	if err := <-other; !errors.Is(err, ErrClosed) {
		t.Errorf("retrying job: %v, want ErrClosed", err)
	}
	if err := <-o.Enqueue(t.Context(), Dest{Key: "c"}, func(context.Context) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("enqueue after close: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines: %d before, %d after Close", before, runtime.NumGoroutine())
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// TestOnFailureCounts: the failure hook hears each retry and each permanent
// failure, and nothing for a success.
func TestOnFailureCounts(t *testing.T) {
	o := newTest(t, Limits{BackoffMin: time.Millisecond, BackoffMax: time.Millisecond})
	var mu sync.Mutex
	retries, permanent := 0, 0
	o.OnFailure(func(retrying bool) {
		mu.Lock()
		defer mu.Unlock()
		if retrying {
			retries++
		} else {
			permanent++
		}
	})
	var r recorder
	if err := o.Send(t.Context(), Dest{Key: "c"}, r.job(0, func(call int) error {
		if call <= 3 {
			return errors.New("connection reset")
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if err := o.Send(t.Context(), Dest{Key: "c"}, r.job(1, func(int) error { return Permanent(errors.New("bad")) })); !IsPermanent(err) {
		t.Fatalf("permanent job: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if retries != 3 || permanent != 1 {
		t.Errorf("retries %d permanent %d, want 3 and 1", retries, permanent)
	}
}

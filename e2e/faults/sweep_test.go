//go:build e2e

package e2efaults

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"approvalbot/gate"
)

// TestHookAgeSweep is the hook-age sweep of issue 14 with real processes:
// hooks that have waited 1, 5, 20 and 59 s for a person (three of each)
// when the daemon is SIGKILLed and restarted must re-attach to their
// approval and print the person's allow once it is approved. The ages are
// real: the hooks are started at staggered times so that one kill finds
// all four ages (59 s falls inside the client's first 60 s long-poll,
// where the old client gave up).
func TestHookAgeSweep(t *testing.T) {
	ages := []time.Duration{59 * time.Second, 20 * time.Second, 5 * time.Second, time.Second}
	const perAge = 3
	d := newDaemon(t)
	d.start()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	start := time.Now()
	killAt := start.Add(ages[0])
	var wg sync.WaitGroup
	results := make(chan hookResult, len(ages)*perAge)
	ageOf := map[string]time.Duration{}
	for _, age := range ages {
		for i := range perAge {
			key := fmt.Sprintf("toolu_age%02d_%d", int(age.Seconds()), i)
			ageOf[key] = age
			wg.Add(1)
			go func() {
				defer wg.Done()
				if !sleepUntil(ctx, killAt.Add(-age)) {
					return
				}
				results <- runHook(ctx, d, key, "make deploy "+key)
			}()
		}
	}
	if !sleepUntil(ctx, killAt) {
		t.Fatal("ran out of time before the kill")
	}
	approver := d.approver()
	// On a loaded machine the youngest hooks may take a moment to post;
	// the kill waits for them (their age is then a little under 1 s).
	waitFor(t, ctx, "every hook's approval", func() bool { return countPending(ctx, approver) == len(ages)*perAge })
	if late := time.Since(killAt); late > 500*time.Millisecond {
		t.Logf("the kill came %s late", late.Round(time.Millisecond))
	}
	d.stop(syscall.SIGKILL)
	d.start()

	// Approve every hook's approval after the restart.
	approved := 0
	for approved < len(ages)*perAge && ctx.Err() == nil {
		pending, err := approver.List(ctx, gate.StatusPending)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range pending {
			if _, err := approver.Approve(ctx, a.ID, false, "", "sweep"); err == nil {
				approved++
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()
	close(results)

	survived := map[time.Duration]int{}
	for r := range results {
		if r.decision == "allow" {
			survived[ageOf[r.key]]++
			continue
		}
		t.Errorf("hook %s (waited %s at the kill): %q %q (%v)\nstderr: %s", r.key, ageOf[r.key], r.decision, r.reason, r.err, tail(r.stderr, 500))
	}
	sort.Slice(ages, func(i, j int) bool { return ages[i] < ages[j] })
	for _, age := range ages {
		t.Logf("waited %2.0fs at the SIGKILL: %d of %d hooks printed allow after the restart", age.Seconds(), survived[age], perAge)
	}
	all, err := approver.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(ages)*perAge {
		t.Errorf("%d approvals for %d tool_use_ids, want one each", len(all), len(ages)*perAge)
	}
}

func sleepUntil(ctx context.Context, at time.Time) bool {
	tm := time.NewTimer(time.Until(at))
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func countPending(ctx context.Context, c interface {
	List(context.Context, gate.Status) ([]*gate.Approval, error)
}) int {
	l, err := c.List(ctx, gate.StatusPending)
	if err != nil {
		return -1
	}
	return len(l)
}

//go:build e2e

package e2efaults

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"approvalbot/gate"
)

// TestShutdownHooksReattach: on SIGTERM the daemon keeps pending approvals
// pending (it does not withdraw them); waiting hooks re-attach after the
// restart and get the person's decision. A hook whose own deadline passes
// while the daemon is down withdraws its approval once the daemon is back
// (within its withdraw grace), and only then says "withdrawn": the store
// shows it cancelled.
func TestShutdownHooksReattach(t *testing.T) {
	d := newDaemon(t)
	d.start()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	approver := d.approver()

	const waiting = 3
	results := make(chan hookResult, waiting+1)
	for i := range waiting {
		go func() { results <- runHook(ctx, d, fmt.Sprintf("toolu_term_%d", i), fmt.Sprintf("make deploy %d", i)) }()
	}
	hookStart := time.Now()
	go func() { results <- runHook(ctx, d, "toolu_term_short", "make short", "--timeout", "3s") }()
	waitFor(t, ctx, "4 pending", func() bool { return countPending(ctx, approver) == waiting+1 })

	d.stop(syscall.SIGTERM)
	// Down past the short hook's deadline, back within its withdraw grace.
	if !sleepUntil(ctx, hookStart.Add(5*time.Second)) {
		t.Fatal("out of time")
	}
	d.start()

	var short hookResult
	waitFor(t, ctx, "the short hook's answer", func() bool {
		select {
		case r := <-results:
			if r.key != "toolu_term_short" {
				t.Fatalf("hook %s answered before any decision: %q %q", r.key, r.decision, r.reason)
			}
			short = r
			return true
		default:
			return false
		}
	})
	if short.decision != "deny" || !strings.Contains(short.reason, "the approval was withdrawn") {
		t.Errorf("short hook: %q %q, want deny saying the approval was withdrawn", short.decision, short.reason)
	}
	all, err := approver.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range all {
		if a.IdempotencyKey == "toolu_term_short" && a.Status != gate.StatusCancelled {
			t.Errorf("the short hook's approval is %s, want cancelled", a.Status)
		}
	}
	pending, err := approver.List(ctx, gate.StatusPending)
	if err != nil || len(pending) != waiting {
		t.Fatalf("%d pending after the restart (%v), want %d: SIGTERM must not withdraw them", len(pending), err, waiting)
	}
	for _, a := range pending {
		if _, err := approver.Approve(ctx, a.ID, false, "", "ana"); err != nil {
			t.Fatal(err)
		}
	}
	for range waiting {
		select {
		case r := <-results:
			if r.decision != "allow" {
				t.Errorf("hook %s: %q %q, want allow after re-attaching", r.key, r.decision, r.reason)
			}
		case <-ctx.Done():
			t.Fatal("hooks did not answer")
		}
	}
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

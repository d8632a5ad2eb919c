package main

import (
	"context"
	"encoding/json"

	"fmt"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/gate"
)

// TestCrashRecovery is issue 4's crash test with real processes: 50
// concurrent clients submit calls that ask, the daemon is SIGKILLed, a new
// daemon starts on the same data dir, and every approval is still there
// exactly once; the clients re-attach and get the decisions made after the
// restart.
func TestCrashRecovery(t *testing.T) {
	const n = 50
	addr := freeAddr(t)
	dataDir := t.TempDir()
	env := []string{"APPROVALBOT_DATA_DIR=" + dataDir, "APPROVALBOT_RULES=" + askRules(t)}
	d := startDaemon(t, addr, env...)
	agent := api.NewClient(d.url, "") // the hooks: no token on an open loopback daemon
	client := approverClient(t, d.url, dataDir)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type result struct {
		i int
		a *gate.Approval
		e error
	}
	results := make(chan result, n)
	for i := range n {
		go func() {
			input, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("touch /tmp/f%d", i)})
			c := gate.Call{Agent: "claude", SessionID: "s", Tool: "Bash", Input: input, Cwd: "/tmp",
				IdempotencyKey: fmt.Sprintf("toolu_%02d", i)}
			a, err := agent.SubmitAndWait(ctx, c, 5*time.Second)
			results <- result{i, a, err}
		}()
	}
	// All 50 pending before the crash.
	waitPending(t, client, n)

	d.kill()
	d = startDaemon(t, addr, env...)

	pending := waitPending(t, client, n)
	seen := map[string]bool{}
	for _, a := range pending {
		if seen[a.IdempotencyKey] {
			t.Fatalf("approval for %s duplicated", a.IdempotencyKey)
		}
		seen[a.IdempotencyKey] = true
	}
	// Decide every approval after the restart: even ones approved, odd denied.
	want := map[string]gate.Status{}
	for _, a := range pending {
		var i int
		fmt.Sscanf(a.IdempotencyKey, "toolu_%d", &i)
		var err error
		if i%2 == 0 {
			_, err = client.Approve(ctx, a.ID, false, "", "tester")
			want[a.IdempotencyKey] = gate.StatusApproved
		} else {
			_, err = client.Deny(ctx, a.ID, fmt.Sprintf("no %d", i), false, "tester")
			want[a.IdempotencyKey] = gate.StatusDenied
		}
		if err != nil {
			t.Fatalf("decide %s: %v", a.ID, err)
		}
	}
	for range n {
		r := <-results
		if r.e != nil {
			t.Fatalf("client %d: %v", r.i, r.e)
		}
		key := fmt.Sprintf("toolu_%02d", r.i)
		if r.a.Status != want[key] || r.a.IdempotencyKey != key {
			t.Errorf("client %d got %s for %s, want %s", r.i, r.a.Status, r.a.IdempotencyKey, want[key])
		}
		if r.a.Status == gate.StatusDenied && r.a.Reason != fmt.Sprintf("no %d", r.i) {
			t.Errorf("client %d reason %q", r.i, r.a.Reason)
		}
	}
	all, err := client.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Errorf("%d approvals stored, want exactly %d", len(all), n)
	}
	if v, err := client.VerifyAudit(ctx); err != nil || v == 0 {
		t.Errorf("audit verify after crash: %d, %v", v, err)
	}
}

func waitPending(t *testing.T, c *api.Client, n int) []*gate.Approval {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		as, err := c.List(ctx, gate.StatusPending)
		cancel()
		if err == nil && len(as) == n {
			return as
		}
		if err == nil && len(as) > n {
			t.Fatalf("%d pending, want %d", len(as), n)
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending = %d (err %v), want %d", len(as), err, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"approvalbot/api"
	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

// realDaemon serves the API of a real gate (on an in-memory store) with
// the CLI's approver token, and returns the gate and the daemon's URL.
func realDaemon(t *testing.T) (*gatetest.Env, string) {
	t.Helper()
	env := gatetest.New(t, gatetest.Options{})
	ts := httptest.NewServer(api.NewServer(api.Config{AdminTokens: map[string]string{cliAdminToken: "ana"}}, env.G, nil))
	t.Cleanup(ts.Close)
	return env, ts.URL
}

// TestApproveSession: `approve --session S` decides the calls of S pending
// now, on the real gate, and none of another session; `deny --session`
// with a reason likewise; an empty session is a failure.
func TestApproveSession(t *testing.T) {
	env, url := realDaemon(t)
	a1 := env.Ask(t, gatetest.Bash("make one"))
	a2 := env.Ask(t, gatetest.Bash("make two"))
	other := gatetest.Bash("make other")
	other.SessionID = "s2"
	b := env.Ask(t, other)

	code, out, errs := run(t, url, cliAdminToken, "approve", "--session", "s1")
	if code != exitOK || !strings.Contains(out, "Approved 2 of 2") {
		t.Fatalf("approve --session: %d %q %q", code, out, errs)
	}
	for _, id := range []string{a1.ID, a2.ID} {
		if got := env.Get(t, id); got.Status != gate.StatusApproved || !strings.HasPrefix(got.DecidedBy, "ana") {
			t.Errorf("%s: %s by %q", id, got.Status, got.DecidedBy)
		}
	}
	if got := env.Get(t, b.ID); got.Status != gate.StatusPending {
		t.Errorf("another session's call is %s", got.Status)
	}
	if code, _, errs := run(t, url, cliAdminToken, "approve", "--session", "s1"); code != exitFailure || !strings.Contains(errs, "nothing pending") {
		t.Errorf("empty session: %d %q", code, errs)
	}
	if code, _, errs := run(t, url, cliAdminToken, "approve", "--session", "s2", "--always"); code != exitUsage {
		t.Errorf("--always with --session: %d %q", code, errs)
	}
	code, out, errs = run(t, url, cliAdminToken, "deny", "--session=s2", "--reason", "use make")
	if code != exitOK || !strings.Contains(out, "Denied 1 of 1") {
		t.Fatalf("deny --session: %d %q %q", code, out, errs)
	}
	if got, _ := env.G.Get(context.Background(), b.ID); got.Status != gate.StatusDenied || got.Reason != "use make" {
		t.Errorf("denied: %s %q", got.Status, got.Reason)
	}
}

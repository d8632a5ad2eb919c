package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

// TestAuditFilters: on the real gate, every decision in `audit --json`
// says what decided it (a rule and which, an Always rule and its pattern,
// a mode, a person); --agent, --decision, --by and --since select.
func TestAuditFilters(t *testing.T) {
	env, url := realDaemon(t)
	ctx := context.Background()
	submit := func(c gate.Call) *gate.Approval {
		a, err := env.G.Submit(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	submit(gatetest.Bash("ls -la"))   // allowed by a rule
	submit(gatetest.Bash("rm -rf /")) // denied by a rule
	a := submit(gatetest.Bash("npm test"))
	if _, err := env.G.Decide(ctx, a.ID, gate.Decision{Approve: true, Always: true, By: "ana", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	submit(gatetest.Bash("npm test --silent")) // allowed by the Always rule (npm test *)
	other := gatetest.Bash("make deploy")
	other.Agent = "codex"
	if err := env.G.SetMode(ctx, "codex", gate.ModeStrict, "bob"); err != nil {
		t.Fatal(err)
	}
	submit(other) // denied by strict mode

	code, out, errs := run(t, url, cliAdminToken, "audit", "--json")
	if code != exitOK {
		t.Fatalf("audit: %d %q", code, errs)
	}
	kinds := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var en struct {
			Event, Detail, Decider string
			Kind                   string `json:"decider_kind"`
		}
		if err := json.Unmarshal([]byte(line), &en); err != nil {
			t.Fatal(err)
		}
		if en.Event == "evaluated" || en.Event == "decided" {
			kinds[en.Kind+" "+en.Decider] = en.Event
		}
	}
	for _, want := range []string{"rule rules.jsonc:3 (Bash: ls *)", "rule denied: `rm -rf /`", "person ana",
		"always Bash: npm test *", "mode strict"} {
		found := false
		for k := range kinds {
			found = found || strings.HasPrefix(k, want)
		}
		if !found {
			t.Errorf("no decision by %q in %v", want, kinds)
		}
	}

	lines := func(args ...string) []string {
		t.Helper()
		code, out, errs := run(t, url, cliAdminToken, append([]string{"audit", "--json"}, args...)...)
		if code != exitOK {
			t.Fatalf("audit %v: %d %q", args, code, errs)
		}
		return strings.Split(strings.TrimSpace(out), "\n")
	}
	if got := lines("--agent", "codex", "--decision", "deny"); len(got) != 1 || !strings.Contains(got[0], `"decider":"strict"`) {
		t.Errorf("--agent codex --decision deny: %q", got)
	}
	if got := lines("--by", "ana", "--decision", "approved_always"); len(got) != 1 {
		t.Errorf("--by ana --decision approved_always: %q", got)
	}
	if got := lines("--since", "2000-01-01T00:00:00Z", "--decision", "allow"); len(got) != 3 {
		t.Errorf("--decision allow: %d entries, want 3 (ls, npm test by a person and by Always)", len(got))
	}
	if code, _, _ := run(t, url, cliAdminToken, "audit", "--since", "yesterday"); code != exitUsage {
		t.Errorf("bad --since: %d", code)
	}
}

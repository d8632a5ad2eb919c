package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

const cliAdminToken = "cli-admin-token-0123456789"

// cliDaemon is the API server on the real gate (gatetest's rules, the real
// clock, a store whose audit log the test may tamper with).
type cliDaemon struct {
	env   *gatetest.Env
	store *gatetest.TamperableStore
	url   string
}

func newCLIDaemon(t *testing.T) *cliDaemon {
	t.Helper()
	st := gatetest.NewTamperableStore()
	env := gatetest.New(t, gatetest.Options{Store: st, Config: gate.Config{Now: time.Now}})
	srv := api.NewServer(api.Config{AdminTokens: map[string]string{cliAdminToken: "ana"},
		AgentTokens: map[string]string{"agent-token-0123456789": "claude"}}, env.G, nil)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &cliDaemon{env: env, store: st, url: ts.URL}
}

// pending submits a Bash call of command from agent, which asks.
func (d *cliDaemon) pending(t *testing.T, agent, command string) *gate.Approval {
	t.Helper()
	c := gatetest.Bash(command)
	c.Agent = agent
	return d.env.Ask(t, c)
}

// run runs the CLI in-process against url with token.
func run(t *testing.T, url, token string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	vars := map[string]string{"APPROVALBOT_URL": url, "APPROVALBOT_TOKEN": token, "USER": "ana"}
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	code = dispatch(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func TestPendingCommand(t *testing.T) {
	d := newCLIDaemon(t)
	code, out, _ := run(t, d.url, cliAdminToken, "pending")
	if code != exitOK || !strings.Contains(out, "no pending approvals") {
		t.Fatalf("empty: %d %q", code, out)
	}
	a := d.pending(t, "claude", "git push origin main")
	evil := d.pending(t, "codex", "echo \x1b[2J\x1b[31mhidden\u202e")
	code, out, errs := run(t, d.url, cliAdminToken, "pending")
	if code != exitOK {
		t.Fatalf("pending: %d %s", code, errs)
	}
	for _, want := range []string{"ID", "AGENT", a.ID, "claude", "Bash", "git push origin main", evil.ID, "codex", "in 9m"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\u202e") {
		t.Errorf("agent text reached the terminal raw:\n%q", out)
	}
	code, out, _ = run(t, d.url, cliAdminToken, "pending", "--json")
	var list struct {
		Approvals []map[string]any `json:"approvals"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &list) != nil || len(list.Approvals) != 2 {
		t.Fatalf("--json: %d %s", code, out)
	}
}

func TestApproveDenyCommands(t *testing.T) {
	d := newCLIDaemon(t)
	ctx := context.Background()
	a := d.pending(t, "claude", "make deploy")
	b := d.pending(t, "claude", "rm -rf build")

	code, out, errs := run(t, d.url, cliAdminToken, "approve", a.ID, "--always", "--scope", "session", "--by", "ana@phone")
	if code != exitOK || !strings.Contains(out, a.ID) || !strings.Contains(out, "Approved always") {
		t.Fatalf("approve: %d %q %q", code, out, errs)
	}
	got, _ := d.env.G.Get(ctx, a.ID)
	if got.Status != gate.StatusApprovedAlways || got.DecidedBy != "ana (ana@phone)" || got.Via != "cli" {
		t.Fatalf("approved: %+v", got)
	}
	if rules, _ := d.env.G.Rules(ctx, "claude"); len(rules) != 1 || rules[0].Scope != gate.ScopeSession {
		t.Fatalf("always rule: %+v", rules)
	}
	code, _, errs = run(t, d.url, cliAdminToken, "deny", a.ID, "--reason", "late")
	if code != exitFailure || !strings.Contains(errs, "already decided") || !strings.Contains(errs, "ana@phone") {
		t.Fatalf("deny decided: %d %q", code, errs)
	}
	code, out, errs = run(t, d.url, cliAdminToken, "deny", "--stop", b.ID, "--reason", "not on main")
	if code != exitOK || !strings.Contains(out, "Denied and stopped") {
		t.Fatalf("deny: %d %q %q", code, out, errs)
	}
	got, _ = d.env.G.Get(ctx, b.ID)
	if got.Status != gate.StatusDeniedStop || got.Reason != "not on main" || got.DecidedBy != "ana (ana (cli))" {
		t.Fatalf("denied: %+v", got)
	}
	if code, _, errs := run(t, d.url, cliAdminToken, "approve", "nope"); code != exitFailure || !strings.Contains(errs, "no such approval") {
		t.Fatalf("unknown id: %d %q", code, errs)
	}
}

func TestRulesModeAuditCommands(t *testing.T) {
	d := newCLIDaemon(t)
	code, out, errs := run(t, d.url, cliAdminToken, "rules", "add", "--agent", "claude", "--tool", "Bash", "--pattern", "git log *", "--expires", "8h")
	if code != exitOK || !strings.Contains(out, "added") {
		t.Fatalf("rules add: %d %q %q", code, out, errs)
	}
	rules, _ := d.env.G.Rules(context.Background(), "")
	if len(rules) != 1 || rules[0].Pattern != "git log *" || rules[0].ExpiresAt == nil || rules[0].CreatedBy != "ana" {
		t.Fatalf("stored: %+v", rules)
	}
	code, out, _ = run(t, d.url, cliAdminToken, "rules", "list")
	if code != exitOK || !strings.Contains(out, rules[0].ID) || !strings.Contains(out, "git log *") || !strings.Contains(out, "in 7h") {
		t.Fatalf("rules list: %d %q", code, out)
	}
	code, out, _ = run(t, d.url, cliAdminToken, "rules", "list", "--agent", "other", "--json")
	if code != exitOK || strings.TrimSpace(out) != "[]" {
		t.Fatalf("rules list other: %d %q", code, out)
	}
	if code, _, errs := run(t, d.url, cliAdminToken, "rules", "rm", rules[0].ID); code != exitOK {
		t.Fatalf("rules rm: %d %q", code, errs)
	}
	if code, _, _ := run(t, d.url, cliAdminToken, "rules", "rm", rules[0].ID); code != exitFailure {
		t.Fatalf("rules rm twice: %d", code)
	}

	if code, out, _ := run(t, d.url, cliAdminToken, "mode", "claude"); code != exitOK || out != "claude: interactive\n" {
		t.Fatalf("mode: %d %q", code, out)
	}
	if code, _, _ := run(t, d.url, cliAdminToken, "mode", "claude", "strict"); code != exitOK {
		t.Fatalf("mode set: %d", code)
	}
	if m, _ := d.env.G.Mode(context.Background(), "claude"); m != gate.ModeStrict {
		t.Fatalf("mode stored: %s", m)
	}

	// Three calls the rules allow, each audited under its own agent.
	ctx := context.Background()
	for i := range 3 {
		c := gatetest.Call("OkTool", `{}`)
		c.Agent = "n" + string(rune('0'+i))
		if a, err := d.env.G.Submit(ctx, c); err != nil || a.Status != gate.StatusAllowed {
			t.Fatalf("allowed call: %v %+v", err, a)
		}
	}
	entries, err := d.env.G.Audit(ctx, 0, 0)
	if err != nil || len(entries) < 3 {
		t.Fatalf("audit log: %v %+v", err, entries)
	}
	if n0 := entries[len(entries)-3]; n0.Agent != "n0" {
		t.Fatalf("audit log ends with %+v, want the call of n0 third from last", n0)
	}
	after := strconv.FormatUint(entries[len(entries)-3].Seq, 10)
	code, out, _ = run(t, d.url, cliAdminToken, "audit", "--after", after)
	if code != exitOK || strings.Contains(out, "n0") || !strings.Contains(out, "n1") || !strings.Contains(out, "n2") {
		t.Fatalf("audit --after %s: %d %q", after, code, out)
	}
	code, out, _ = run(t, d.url, cliAdminToken, "audit", "--json", "--limit", "2")
	if code != exitOK || strings.Count(out, "\n") != 2 {
		t.Fatalf("audit --json: %d %q", code, out)
	}
	verified := fmt.Sprintf("OK: %d entries", len(entries))
	if code, out, _ := run(t, d.url, cliAdminToken, "audit", "--verify"); code != exitOK || !strings.Contains(out, verified) {
		t.Fatalf("verify: %d %q, want %q", code, out, verified)
	}
	d.store.Tamper("audit chain broken at seq 2")
	if code, _, errs := run(t, d.url, cliAdminToken, "audit", "--verify"); code != exitFailure || !strings.Contains(errs, "seq 2") {
		t.Fatalf("verify broken: %d %q", code, errs)
	}
}

func TestClientCommandErrors(t *testing.T) {
	d := newCLIDaemon(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	tests := []struct {
		name   string
		url    string
		token  string
		args   []string
		code   int
		stderr string
	}{
		{"unreachable", dead, "", []string{"pending"}, exitFailure, "cannot reach the daemon at " + dead},
		{"unreachable approve", dead, "", []string{"approve", "a1"}, exitFailure, dead},
		{"wrong token", d.url, "wrong", []string{"pending"}, exitFailure, "needs the approver credential"},
		{"agent token", d.url, "agent-token-0123456789", []string{"rules", "list"}, exitFailure, "needs an admin token"},
		{"approve without id", d.url, cliAdminToken, []string{"approve"}, exitUsage, "want 1 argument"},
		{"approve two ids", d.url, cliAdminToken, []string{"approve", "a", "b"}, exitUsage, "want 1 argument"},
		{"bad scope", d.url, cliAdminToken, []string{"approve", "a", "--always", "--scope", "world"}, exitUsage, "bad --scope"},
		{"scope without always", d.url, cliAdminToken, []string{"approve", "a", "--scope", "agent"}, exitUsage, "only goes with --always"},
		{"unknown flag", d.url, cliAdminToken, []string{"deny", "a", "--rason", "x"}, exitUsage, "flag provided but not defined"},
		{"pending extra arg", d.url, cliAdminToken, []string{"pending", "x"}, exitUsage, "want 0 argument"},
		{"rules no sub", d.url, cliAdminToken, []string{"rules"}, exitUsage, "usage"},
		{"rules bad sub", d.url, cliAdminToken, []string{"rules", "zap"}, exitUsage, "unknown subcommand"},
		{"rules add missing", d.url, cliAdminToken, []string{"rules", "add", "--agent", "a"}, exitUsage, "required"},
		{"rules add session", d.url, cliAdminToken, []string{"rules", "add", "--agent", "a", "--tool", "Bash", "--pattern", "*", "--scope", "session"}, exitUsage, "--session"},
		{"rules add bad expires", d.url, cliAdminToken, []string{"rules", "add", "--agent", "a", "--tool", "Bash", "--pattern", "*", "--expires", "soon"}, exitUsage, "invalid value"},
		{"mode no agent", d.url, cliAdminToken, []string{"mode"}, exitUsage, "usage"},
		{"mode bad", d.url, cliAdminToken, []string{"mode", "claude", "yolo"}, exitUsage, "bad mode"},
		{"audit bad after", d.url, cliAdminToken, []string{"audit", "--after", "-1"}, exitUsage, "invalid value"},
		{"help", d.url, cliAdminToken, []string{"approve", "-h"}, exitOK, "usage: approvalbot approve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := run(t, tt.url, tt.token, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.stderr) {
				t.Fatalf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errs, tt.code, tt.stderr)
			}
		})
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[string]string{"42s": "42s", "5m30s": "5m", "3h10m": "3h", "72h": "3d", "-90s": "-1m"} {
		dur, _ := time.ParseDuration(d)
		if got := shortDuration(dur); got != want {
			t.Errorf("shortDuration(%s) = %s, want %s", d, got, want)
		}
	}
}

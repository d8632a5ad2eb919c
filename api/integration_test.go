package api

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalbot/gate"
	"approvalbot/store"
)

// realGate is a gate on a bbolt store in dir, with rules: OkTool allow,
// BadTool deny, anything else ask.
func realGate(t testing.TB, dir string) (*gate.Gate, func()) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "approvalbot.db"), store.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	p, err := gate.Compile(gate.PolicySpec{File: "rules.jsonc", Rules: []gate.RuleSpec{
		{Tool: "*", Pattern: "*", Action: gate.Ask, File: "rules.jsonc", Line: 1},
		{Tool: "OkTool", Pattern: "*", Action: gate.Allow, File: "rules.jsonc", Line: 2},
		{Tool: "BadTool", Pattern: "*", Action: gate.Deny, File: "rules.jsonc", Line: 3},
	}})
	if err != nil {
		t.Fatalf("compile policy: %v", err)
	}
	g := gate.New(gate.Config{Timeout: 10 * time.Minute}, p, st, nil)
	if err := g.Start(context.Background()); err != nil {
		t.Fatalf("start gate: %v", err)
	}
	return g, func() { g.Close(); st.Close() }
}

func TestIntegrationRealGate(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	g, closeGate := realGate(t, dir)
	cfg := Config{AgentTokens: map[string]string{tokAlice: "alice"}, AdminTokens: map[string]string{tokAdmin: "ana"}}
	d := newRestartable(t, NewServer(cfg, g, nil))
	base := "http://" + d.addr
	alice := NewClient(base, tokAlice, WithPollWait(time.Minute))
	admin := NewClient(base, tokAdmin)

	a, err := alice.Submit(ctx, gate.Call{Tool: "OkTool", Input: json.RawMessage(`{"x":1}`)}, 0)
	if err != nil || a.Status != gate.StatusAllowed || a.Agent != "alice" {
		t.Fatalf("allowed: %v %+v", err, a)
	}
	r := postCall(t, base, tokAlice, `{"agent":"mallory","tool":"BadTool","input":{}}`)
	rules, _ := r["rules"].([]any)
	if r["status"] != "denied" || r["decision"] != "deny" || r["agent"] != "alice" || len(rules) != 1 ||
		rules[0].(map[string]any)["line"] != float64(3) {
		t.Fatalf("denied: %v", r)
	}

	// An asking call: the waiting client, the event stream and the approver meet.
	events := make(chan gate.Event, 16)
	ectx, stopEvents := context.WithCancel(ctx)
	evDone := make(chan error, 1)
	go func() { evDone <- admin.Events(ectx, func(ev gate.Event) error { events <- ev; return nil }) }()
	waited := make(chan *gate.Approval, 1)
	go func() {
		a, err := alice.SubmitAndWait(ctx, gate.Call{SessionID: "s1", Tool: "Deploy", Input: json.RawMessage(`{"env":"prod"}`), IdempotencyKey: "tu-1"}, time.Second)
		if err != nil {
			t.Errorf("SubmitAndWait: %v", err)
		}
		waited <- a
	}()
	var ev gate.Event
	select {
	case ev = <-events:
	case <-ctx.Done():
		t.Fatal("no approval_required event")
	}
	if ev.Type != gate.EventApprovalRequired || ev.Approval.Tool != "Deploy" || string(ev.Approval.Input) != `{"env":"prod"}` {
		t.Fatalf("event: %+v", ev)
	}
	id := ev.Approval.ID

	// Restart the daemon on the same store and address; the client re-attaches.
	d.stop()
	closeGate()
	g, closeGate = realGate(t, dir)
	t.Cleanup(closeGate)
	d.handler = NewServer(cfg, g, nil)
	d.start()
	if err := <-evDone; err == nil {
		t.Fatal("event stream survived the restart")
	}
	stopEvents()

	ap, err := admin.Approve(ctx, id, false, "", "ana@laptop")
	if err != nil || ap.Status != gate.StatusApproved {
		t.Fatalf("approve after restart: %v %+v", err, ap)
	}
	if got := <-waited; got == nil || got.ID != id || got.Status != gate.StatusApproved || got.Decision != gate.Allow {
		t.Fatalf("waiting client got %+v", got)
	}
	if _, err := admin.Deny(ctx, id, "late", false, "bo"); !errors.Is(err, gate.ErrAlreadyDecided) {
		t.Fatalf("second decision: %v", err)
	}
	all, err := admin.List(ctx, "")
	if err != nil || len(all) != 1 {
		t.Fatalf("approvals after restart: %v %d", err, len(all))
	}
	if _, err := alice.Get(ctx, "nope", 0); !errors.Is(err, gate.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}

	// Rules, modes, audit, health.
	rule, err := admin.AddRule(ctx, gate.AlwaysRule{Agent: "alice", Tool: "Deploy", Pattern: "*"})
	if err != nil || rule.ID == "" {
		t.Fatalf("add rule: %v %+v", err, rule)
	}
	if a, err := alice.Submit(ctx, gate.Call{Tool: "Deploy", Input: json.RawMessage(`{"env":"dev"}`)}, 0); err != nil || a.Status != gate.StatusAllowed {
		t.Fatalf("after Always rule: %v %+v", err, a)
	}
	if err := admin.DeleteRule(ctx, rule.ID); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetMode(ctx, "alice", gate.ModeStrict); err != nil {
		t.Fatal(err)
	}
	if a, err := alice.Submit(ctx, gate.Call{Tool: "Deploy", Input: json.RawMessage(`{"env":"qa"}`)}, 0); err != nil || a.Status != gate.StatusDenied {
		t.Fatalf("strict mode: %v %+v", err, a)
	}
	entries, err := admin.Audit(ctx, 0, 0)
	if err != nil || len(entries) == 0 {
		t.Fatalf("audit: %v %d", err, len(entries))
	}
	if n, err := admin.VerifyAudit(ctx); err != nil || n < len(entries) {
		t.Fatalf("verify: %v %d, want %d", err, n, len(entries))
	}
	if h, err := admin.Health(ctx); err != nil || !h.OK {
		t.Fatalf("health: %v %+v", err, h)
	}
}

// postCall posts body to /v1/calls and returns the decoded answer.
func postCall(t *testing.T, base, token, body string) map[string]any {
	t.Helper()
	c := NewClient(base, token)
	resp, err := c.request(context.Background(), "POST", "/v1/calls", nil, json.RawMessage(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSubmitRefusalsRealGate: through the real gate, an input two readers
// could read differently is 400 and stores nothing; an idempotency key
// reused for another call is 409, changes nothing and never carries the
// earlier decision.
func TestSubmitRefusalsRealGate(t *testing.T) {
	g, closeGate := realGate(t, t.TempDir())
	defer closeGate()
	ts := httptest.NewServer(NewServer(openConfig(), g, nil))
	defer ts.Close()
	e := &testEnv{ts: ts}
	ctx := ctxT(t)

	first := e.call(t, "POST", "/v1/calls", "", `{"agent":"claude","session_id":"s1","tool":"AskTool","input":{"cmd":"terraform apply"},"idempotency_key":"call-0001"}`)
	if first.status != 200 || first.body["status"] != "pending" {
		t.Fatalf("first call: %d %s", first.status, first.raw)
	}
	if _, err := NewClient(ts.URL, tokLocal).Approve(ctx, first.body["id"].(string), false, "", "ana"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, body string
		want       int
		errHas     string
	}{
		{"duplicate keys", `{"agent":"claude","tool":"Read","input":{"file_path":"~/.claude/settings.json","file_path":"notes.txt"}}`, 400, "twice"},
		{"case-variant keys", `{"agent":"claude","tool":"Read","input":{"file_path":"~/.claude/settings.json","FILE_PATH":"notes.txt"}}`, 400, "differ only in case"},
		{"lone case variant of a path field", `{"agent":"claude","tool":"Write","input":{"FILE_PATH":"~/.claude/settings.json"}}`, 400, "case variant"},
		{"nested duplicate", `{"agent":"claude","tool":"AskTool","input":{"a":{"x":1,"x":2}}}`, 400, "twice"},
		{"reserved key", `{"agent":"claude","tool":"AskTool","input":{},"idempotency_key":"derived:1"}`, 400, "reserved"},
		{"key reused for another call", `{"agent":"claude","session_id":"s2","tool":"AskTool","input":{"cmd":"dropdb production"},"idempotency_key":"call-0001"}`, 409, "another call"},
		{"key reused, other session", `{"agent":"claude","session_id":"s2","tool":"AskTool","input":{"cmd":"terraform apply"},"idempotency_key":"call-0001"}`, 409, "another call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(t, "POST", "/v1/calls", "", tt.body)
			msg, _ := r.body["error"].(string)
			if r.status != tt.want || !strings.Contains(msg, tt.errHas) || r.body["decision"] != nil {
				t.Fatalf("got %d %s, want %d with an error saying %q", r.status, r.raw, tt.want, tt.errHas)
			}
		})
	}
	all, err := g.List(ctx, "")
	if err != nil || len(all) != 1 || all[0].Status != gate.StatusApproved {
		t.Fatalf("stored %d approvals (%v), want only the first, approved", len(all), err)
	}
	entries, _ := g.Audit(ctx, 0, 0)
	conflicts := 0
	for _, en := range entries {
		if en.Event == "idempotency_conflict" {
			conflicts++
		}
	}
	if conflicts != 2 {
		t.Errorf("%d conflicts audited, want 2", conflicts)
	}
	// The approval carries the input as the gate judged it, for clients to
	// render: an argv re-quoted, not joined.
	r := e.call(t, "POST", "/v1/calls", "", `{"agent":"claude","tool":"shell","input":{"command":["touch","a; rm -rf ~"]}}`)
	if j, _ := r.body["judged"].(map[string]any); j["command"] != "touch 'a; rm -rf ~'" || j["kind"] != "shell" {
		t.Errorf("judged = %v (%s)", r.body["judged"], r.raw)
	}
	// The same call under its key still gets its own decision.
	if r := e.call(t, "POST", "/v1/calls", "", `{"agent":"claude","session_id":"s1","tool":"AskTool","input":{"cmd":"terraform apply"},"idempotency_key":"call-0001"}`); r.body["status"] != "approved" {
		t.Errorf("re-post of the first call: %s", r.raw)
	}
}

// TestShutdownAnswers503: serve cancels the handlers' base context before
// it stops listening, so a request arriving in that window sees a store
// that says "context canceled". The answer must be 503 "shutting down",
// which hooks retry until the daemon is back, not a 500 that they turn
// into a deny.
func TestShutdownAnswers503(t *testing.T) {
	g, closeGate := realGate(t, t.TempDir())
	defer closeGate()
	srv := NewServer(Config{Open: true, AdminTokens: map[string]string{tokLocal: "local-approver"}}, g, nil)
	a, err := g.Submit(context.Background(), gate.Call{Agent: "claude-code", Tool: "Bash",
		Input: json.RawMessage(`{"command":"make deploy"}`)})
	if err != nil {
		t.Fatal(err)
	}
	base, cancel := context.WithCancel(context.Background())
	cancel() // serve's runCtx at shutdown
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.BaseContext = func(net.Listener) context.Context { return base }
	ts.Start()
	defer ts.Close()
	for _, path := range []string{"/v1/approvals/" + a.ID, "/v1/approvals/" + a.ID + "?wait=5s"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || body["code"] != codeClosed {
			t.Errorf("GET %s while shutting down: %d %v, want 503 %s", path, resp.StatusCode, body, codeClosed)
		}
	}
}

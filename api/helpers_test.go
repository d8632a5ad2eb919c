package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

// Tokens used across the tests.
const (
	tokAlice = "alice-token-0123456789"
	tokBob   = "bob-token-0123456789"
	tokAdmin = "admin-token-0123456789"
	tokLocal = "local-approver-token-0123456789" // the approver token serve keeps in DATA_DIR/approver.token
)

// openConfig is serve's zero-config setup: an open loopback listener (calls
// need no token) whose only credential is the approver token file's.
func openConfig() Config {
	return Config{Open: true, AdminTokens: map[string]string{tokLocal: "local-approver"}}
}

func tokenConfig() Config {
	return Config{
		AgentTokens: map[string]string{tokAlice: "alice", tokBob: "bob"},
		AdminTokens: map[string]string{tokAdmin: "ana"},
	}
}

// envRules are the rules of newEnv's gate: Read and OkTool are allowed,
// Nope and BadTool denied, anything else asks.
const envRules = `{"*": "ask", "Read": "allow", "OkTool": "allow", "Nope": "deny", "BadTool": "deny"}`

type testEnv struct {
	g     *gate.Gate                // the real gate, on an in-memory store
	store *gatetest.TamperableStore // its store
	svc   *watched                  // what the server uses: g, its subscriptions counted
	srv   *Server
	ts    *httptest.Server
}

// newEnv serves the real gate (envRules, the real clock) with cfg.
func newEnv(t testing.TB, cfg Config) *testEnv {
	t.Helper()
	st := gatetest.NewTamperableStore()
	g := gatetest.New(t, gatetest.Options{Rules: envRules, Store: st, Config: gate.Config{Now: time.Now}}).G
	svc := &watched{Gate: g}
	srv := NewServer(cfg, svc, slog.New(slog.DiscardHandler))
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &testEnv{g: g, store: st, svc: svc, srv: srv, ts: ts}
}

// watched is the real gate with its subscriptions counted, so that a test
// can see the server let go of one when its client leaves.
type watched struct {
	*gate.Gate
	subs atomic.Int32
}

// held counts a subscription until ctx, which ends it, ends.
func (w *watched) held(ctx context.Context) {
	w.subs.Add(1)
	context.AfterFunc(ctx, func() { w.subs.Add(-1) })
}

func (w *watched) Subscribe(ctx context.Context) <-chan gate.Event {
	w.held(ctx)
	return w.Gate.Subscribe(ctx)
}

func (w *watched) SubscribeLive(ctx context.Context) <-chan gate.Event {
	w.held(ctx)
	return w.Gate.SubscribeLive(ctx)
}

// subscribers is the number of subscriptions the server holds.
func (e *testEnv) subscribers() int { return int(e.svc.subs.Load()) }

// audited is the length of the gate's audit log: every call that reaches
// the gate's rules, and every change, adds to it.
func (e *testEnv) audited(t testing.TB) int {
	t.Helper()
	entries, err := e.g.Audit(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func (e *testEnv) client(token string) *Client { return NewClient(e.ts.URL, token) }

// pending submits an asking call for agent and returns its approval.
func (e *testEnv) pending(t testing.TB, agent, key string) *gate.Approval {
	t.Helper()
	a, err := e.g.Submit(context.Background(), gate.Call{Agent: agent, Tool: "Bash",
		Input: json.RawMessage(`{"command":"make deploy"}`), IdempotencyKey: key})
	if err != nil || a.Status != gate.StatusPending {
		t.Fatalf("submit: %v %+v", err, a)
	}
	return a
}

type result struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// call sends a raw request; body "" sends none; JSON content type unless ct says otherwise.
func (e *testEnv) call(t testing.TB, method, path, token, body string, hdr ...string) result {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	r := result{status: resp.StatusCode, header: resp.Header, raw: string(data)}
	_ = json.Unmarshal(data, &r.body)
	return r
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

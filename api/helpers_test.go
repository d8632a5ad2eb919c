package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"approvalbot/api/apitest"
	"approvalbot/gate"
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

type testEnv struct {
	fake *apitest.Fake
	srv  *Server
	ts   *httptest.Server
}

func newEnv(t testing.TB, cfg Config) *testEnv {
	t.Helper()
	fake := apitest.NewFake()
	fake.Answer = func(c gate.Call) gate.Action {
		switch c.Tool {
		case "Read", "OkTool":
			return gate.Allow
		case "Nope":
			return gate.Deny
		}
		return gate.Ask
	}
	srv := NewServer(cfg, fake, slog.New(slog.DiscardHandler))
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &testEnv{fake: fake, srv: srv, ts: ts}
}

func (e *testEnv) client(token string) *Client { return NewClient(e.ts.URL, token) }

// pending submits an asking call for agent and returns its approval.
func (e *testEnv) pending(t testing.TB, agent, key string) *gate.Approval {
	t.Helper()
	a, err := e.fake.Submit(context.Background(), gate.Call{Agent: agent, Tool: "Bash",
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

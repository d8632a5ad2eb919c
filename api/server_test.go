package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"approvalbot/gate"
)

func TestAuthMatrix(t *testing.T) {
	tokens := newEnv(t, tokenConfig())
	a1 := tokens.pending(t, "alice", "k1")
	b1 := tokens.pending(t, "bob", "k2")
	open := newEnv(t, openConfig())
	o1 := open.pending(t, "alice", "k1")
	o2 := open.pending(t, "alice", "k2")
	// Open is ignored for calls when agent tokens exist.
	both := newEnv(t, Config{Open: true, AgentTokens: map[string]string{tokAlice: "alice"}, AdminTokens: map[string]string{tokAdmin: "ana"}})

	call := `{"agent":"alice","tool":"Bash","input":{"command":"ls"}}`
	tests := []struct {
		name         string
		env          *testEnv
		method, path string
		token, body  string
		want         int
	}{
		{"open submit", open, "POST", "/v1/calls", "", call, 200},
		{"open waits by id", open, "GET", "/v1/approvals/" + o1.ID, "", "", 200},
		{"open cancels by id", open, "POST", "/v1/approvals/" + o2.ID + "/cancel", "", `{}`, 200},
		{"open lists only with a token", open, "GET", "/v1/approvals", "", "", 401},
		{"open lists with the approver token", open, "GET", "/v1/approvals", tokLocal, "", 200},
		{"open approve needs the approver token", open, "POST", "/v1/approvals/" + o1.ID + "/approve", "", `{}`, 401},
		{"open deny needs the approver token", open, "POST", "/v1/approvals/" + o1.ID + "/deny", "", `{}`, 401},
		{"open rules need the approver token", open, "GET", "/v1/rules", "", "", 401},
		{"open add rule needs the approver token", open, "POST", "/v1/rules", "", `{"agent":"alice","tool":"Bash","pattern":"*"}`, 401},
		{"open delete rule needs the approver token", open, "DELETE", "/v1/rules/r1", "", "", 401},
		{"open mode needs the approver token", open, "GET", "/v1/agents/alice/mode", "", "", 401},
		{"open set mode needs the approver token", open, "PUT", "/v1/agents/alice/mode", "", `{"mode":"approve_all"}`, 401},
		{"open audit needs the approver token", open, "GET", "/v1/audit", "", "", 401},
		{"open verify needs the approver token", open, "GET", "/v1/audit/verify", "", "", 401},
		{"open events need the approver token", open, "GET", "/v1/events", "", "", 401},
		{"open encoded approve needs the approver token", open, "POST", "/v1/approvals/" + o1.ID + "/%61pprove", "", `{}`, 401},
		{"open wrong token", open, "POST", "/v1/calls", "nope-nope-nope", call, 401},
		{"open approve with the approver token", open, "POST", "/v1/approvals/" + o1.ID + "/approve", tokLocal, `{}`, 200},
		{"no token", tokens, "POST", "/v1/calls", "", call, 401},
		{"wrong token", tokens, "POST", "/v1/calls", "nope-nope-nope", call, 401},
		{"wrong token admin route", tokens, "GET", "/v1/rules", "nope", "", 401},
		{"open ignored with agent tokens", both, "POST", "/v1/calls", "", call, 401},
		{"open ignored, token works", both, "POST", "/v1/calls", tokAlice, call, 200},
		{"agent submit", tokens, "POST", "/v1/calls", tokAlice, call, 200},
		{"agent lists", tokens, "GET", "/v1/approvals", tokAlice, "", 200},
		{"agent gets own", tokens, "GET", "/v1/approvals/" + a1.ID, tokAlice, "", 200},
		{"agent gets other's", tokens, "GET", "/v1/approvals/" + b1.ID, tokAlice, "", 404},
		{"agent cancels other's", tokens, "POST", "/v1/approvals/" + b1.ID + "/cancel", tokAlice, `{}`, 404},
		{"agent approves", tokens, "POST", "/v1/approvals/" + a1.ID + "/approve", tokAlice, `{}`, 403},
		{"agent denies", tokens, "POST", "/v1/approvals/" + a1.ID + "/deny", tokAlice, `{}`, 403},
		{"agent rules", tokens, "GET", "/v1/rules", tokAlice, "", 403},
		{"agent adds rule", tokens, "POST", "/v1/rules", tokAlice, `{"agent":"alice","tool":"Bash","pattern":"*"}`, 403},
		{"agent deletes rule", tokens, "DELETE", "/v1/rules/r1", tokAlice, "", 403},
		{"agent mode", tokens, "GET", "/v1/agents/alice/mode", tokAlice, "", 403},
		{"agent sets mode", tokens, "PUT", "/v1/agents/alice/mode", tokAlice, `{"mode":"approve_all"}`, 403},
		{"agent audit", tokens, "GET", "/v1/audit", tokAlice, "", 403},
		{"agent verify", tokens, "GET", "/v1/audit/verify", tokAlice, "", 403},
		{"agent events", tokens, "GET", "/v1/events", tokAlice, "", 403},
		{"admin rules", tokens, "GET", "/v1/rules", tokAdmin, "", 200},
		{"admin gets any", tokens, "GET", "/v1/approvals/" + b1.ID, tokAdmin, "", 200},
		{"admin mode", tokens, "GET", "/v1/agents/bob/mode", tokAdmin, "", 200},
		{"admin audit", tokens, "GET", "/v1/audit", tokAdmin, "", 200},
		{"healthz public", tokens, "GET", "/healthz", "", "", 200},
		{"metrics public", tokens, "GET", "/metrics", "", "", 200},
		{"agent cancels own", tokens, "POST", "/v1/approvals/" + a1.ID + "/cancel", tokAlice, `{"reason":"gone"}`, 200},
		{"admin approves (already cancelled)", tokens, "POST", "/v1/approvals/" + a1.ID + "/approve", tokAdmin, `{}`, 409},
		{"admin approves", tokens, "POST", "/v1/approvals/" + b1.ID + "/approve", tokAdmin, `{}`, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.env.call(t, tt.method, tt.path, tt.token, tt.body)
			if r.status != tt.want {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, r.status, r.raw, tt.want)
			}
			if r.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if r.status >= 400 && r.body["error"] == nil {
				t.Errorf("error answer without error field: %s", r.raw)
			}
		})
	}
}

func TestAgentComesFromToken(t *testing.T) {
	e := newEnv(t, tokenConfig())
	r := e.call(t, "POST", "/v1/calls", tokAlice, `{"agent":"mallory","tool":"Bash","input":{"command":"ls"}}`)
	if r.status != 200 || r.body["agent"] != "alice" {
		t.Fatalf("got %d %s, want agent alice", r.status, r.raw)
	}
	// Bob does not see Alice's approval in his list.
	r = e.call(t, "GET", "/v1/approvals", tokBob, "")
	if n := len(r.body["approvals"].([]any)); n != 0 {
		t.Fatalf("bob sees %d approvals: %s", n, r.raw)
	}
	r = e.call(t, "GET", "/v1/approvals", tokAlice, "")
	if n := len(r.body["approvals"].([]any)); n != 1 {
		t.Fatalf("alice sees %d approvals: %s", n, r.raw)
	}
}

func TestDecidedBy(t *testing.T) {
	e := newEnv(t, tokenConfig())
	a := e.pending(t, "alice", "k")
	r := e.call(t, "POST", "/v1/approvals/"+a.ID+"/deny", tokAdmin, `{"reason":"no","by":"ana@laptop","via":"cli"}`)
	if r.status != 200 || r.body["decided_by"] != "ana (ana@laptop)" || r.body["via"] != "cli" || r.body["status"] != "denied" {
		t.Fatalf("got %d %s", r.status, r.raw)
	}
	o := newEnv(t, openConfig())
	a = o.pending(t, "alice", "k")
	r = o.call(t, "POST", "/v1/approvals/"+a.ID+"/approve", tokLocal, `{"by":"me@box"}`)
	if r.body["decided_by"] != "local-approver (me@box)" || r.body["via"] != "api" {
		t.Fatalf("open: got %s", r.raw)
	}
	a = o.pending(t, "alice", "k2")
	r = o.call(t, "POST", "/v1/approvals/"+a.ID+"/approve", tokLocal, "")
	if r.status != 200 || r.body["decided_by"] != "local-approver" {
		t.Fatalf("open, empty body: got %d %s", r.status, r.raw)
	}
}

func TestBrowserRequestsRefused(t *testing.T) {
	o := newEnv(t, openConfig())
	a := o.pending(t, "alice", "k")
	audited := o.audited(t)
	call := `{"agent":"alice","tool":"Bash","input":{"command":"ls"}}`
	for _, tt := range []struct {
		name  string
		path  string
		token string
		hdr   []string
		want  int
	}{
		{"DNS rebinding Host", "/v1/calls", "", []string{"Host", "evil.example:8754"}, 401},
		{"cross-site fetch", "/v1/calls", "", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"foreign Origin", "/v1/calls", "", []string{"Origin", "https://evil.example"}, 403},
		{"form post", "/v1/calls", "", []string{"Content-Type", "text/plain"}, 415},
		// A proxy on this machine makes every peer loopback: never local.
		{"X-Forwarded-For", "/v1/calls", "", []string{"X-Forwarded-For", "203.0.113.7"}, 401},
		{"X-Forwarded-Host", "/v1/calls", "", []string{"X-Forwarded-Host", "localhost"}, 401},
		{"Forwarded", "/v1/calls", "", []string{"Forwarded", "for=203.0.113.7"}, 401},
		{"X-Real-IP", "/v1/calls", "", []string{"X-Real-IP", "203.0.113.7"}, 401},
		{"approver, cross-site", "/v1/approvals/" + a.ID + "/approve", tokLocal, []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"approver, form post", "/v1/approvals/" + a.ID + "/approve", tokLocal, []string{"Content-Type", "text/plain"}, 415},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := o.call(t, "POST", tt.path, tt.token, call, tt.hdr...)
			if r.status != tt.want {
				t.Fatalf("got %d %s, want %d", r.status, r.raw, tt.want)
			}
		})
	}
	if got, _ := o.g.Get(context.Background(), a.ID); got.Status != gate.StatusPending {
		t.Fatalf("approval changed to %s", got.Status)
	}
	if n := o.audited(t); n != audited {
		t.Fatalf("%d calls got through", n-audited)
	}
	if l, _ := o.g.List(context.Background(), ""); len(l) != 1 {
		t.Fatalf("%d approvals, want only the first", len(l))
	}
	// Behind a proxy, a token is what works.
	if r := o.call(t, "POST", "/v1/calls", tokLocal, call, "X-Forwarded-For", "203.0.113.7"); r.status != 200 {
		t.Fatalf("approver token through a proxy: %d %s", r.status, r.raw)
	}
	if r := o.call(t, "GET", "/healthz", "", "", "Host", "localhost:8754"); r.status != 200 {
		t.Fatalf("localhost Host refused: %d", r.status)
	}
}

func TestBadInput(t *testing.T) {
	cfg := openConfig()
	cfg.MaxBody = 4096
	e := newEnv(t, cfg)
	a := e.pending(t, "alice", "k")
	decided := e.pending(t, "alice", "k-decided")
	if _, err := e.g.Decide(context.Background(), decided.ID, gate.Decision{Approve: true, By: "ana", Via: "telegram"}); err != nil {
		t.Fatal(err)
	}
	auditedBefore := e.audited(t)
	huge := `{"agent":"a","tool":"Bash","input":{"command":"` + strings.Repeat("x", 5000) + `"}}`
	tests := []struct {
		name, method, path, body string
		hdr                      []string
		want                     int
		code                     string
	}{
		{"malformed JSON", "POST", "/v1/calls", `{"agent":"a",`, nil, 400, "invalid"},
		{"not JSON", "POST", "/v1/calls", `agent=a`, nil, 400, "invalid"},
		{"unknown field", "POST", "/v1/calls", `{"agent":"a","tool":"Bash","extra":1}`, nil, 400, "invalid"},
		{"trailing data", "POST", "/v1/calls", `{"agent":"a","tool":"Bash"} {}`, nil, 400, "invalid"},
		{"trailing garbage", "POST", "/v1/calls", `{"agent":"a","tool":"Bash"}x`, nil, 400, "invalid"},
		{"wrong type", "POST", "/v1/calls", `{"agent":1,"tool":"Bash"}`, nil, 400, "invalid"},
		{"input not object", "POST", "/v1/calls", `{"agent":"a","tool":"Bash","input":"ls"}`, nil, 400, "invalid"},
		{"empty body", "POST", "/v1/calls", ``, []string{"Content-Type", "application/json"}, 400, "invalid"},
		{"missing tool", "POST", "/v1/calls", `{"agent":"a"}`, nil, 400, "invalid"},
		{"huge body", "POST", "/v1/calls", huge, nil, 413, "too_large"},
		{"no content type", "POST", "/v1/calls", `{"agent":"a","tool":"Bash"}`, []string{"Content-Type", ""}, 415, "unsupported_media_type"},
		{"bad wait", "POST", "/v1/calls?wait=soon", `{"agent":"a","tool":"Bash"}`, nil, 400, "invalid"},
		{"negative wait", "GET", "/v1/approvals/" + a.ID + "?wait=-5s", "", nil, 400, "invalid"},
		{"unknown id", "GET", "/v1/approvals/nope", "", nil, 404, "not_found"},
		{"approve unknown id", "POST", "/v1/approvals/nope/approve", `{}`, nil, 404, "not_found"},
		{"already decided", "POST", "/v1/approvals/" + decided.ID + "/deny", `{"reason":"late"}`, nil, 409, "already_decided"},
		{"digest mismatch", "POST", "/v1/approvals/" + a.ID + "/approve", `{"digest":"00000000"}`, nil, 409, "digest_mismatch"},
		{"digest prefix too short", "POST", "/v1/approvals/" + a.ID + "/approve", `{"digest":"` + a.Digest[:7] + `"}`, nil, 400, "invalid"},
		{"bad scope", "POST", "/v1/approvals/" + a.ID + "/approve", `{"always":true,"scope":"world"}`, nil, 400, "invalid"},
		{"scope without always", "POST", "/v1/approvals/" + a.ID + "/approve", `{"scope":"agent"}`, nil, 400, "invalid"},
		{"bad via", "POST", "/v1/approvals/" + a.ID + "/deny", `{"via":"Tele gram"}`, nil, 400, "invalid"},
		{"deny unknown field", "POST", "/v1/approvals/" + a.ID + "/deny", `{"reson":"typo"}`, nil, 400, "invalid"},
		{"bad status", "GET", "/v1/approvals?status=weird", "", nil, 400, "invalid"},
		{"rule with id", "POST", "/v1/rules", `{"id":"x","agent":"a","tool":"Bash","pattern":"*"}`, nil, 400, "invalid"},
		{"rule missing pattern", "POST", "/v1/rules", `{"agent":"a","tool":"Bash"}`, nil, 400, "invalid"},
		{"session rule without session", "POST", "/v1/rules", `{"agent":"a","tool":"Bash","pattern":"*","scope":"session"}`, nil, 400, "invalid"},
		{"delete unknown rule", "DELETE", "/v1/rules/nope", "", nil, 404, "not_found"},
		{"bad mode", "PUT", "/v1/agents/alice/mode", `{"mode":"yolo"}`, nil, 400, "invalid"},
		{"mode agent mismatch", "PUT", "/v1/agents/alice/mode", `{"agent":"bob","mode":"strict"}`, nil, 400, "invalid"},
		{"bad after", "GET", "/v1/audit?after=-1", "", nil, 400, "invalid"},
		{"bad limit", "GET", "/v1/audit?limit=x", "", nil, 400, "invalid"},
		{"unknown route", "GET", "/v1/nothing", "", nil, 404, "not_found"},
		{"wrong method", "DELETE", "/v1/calls", "", nil, 405, "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(t, tt.method, tt.path, tokLocal, tt.body, tt.hdr...)
			if r.status != tt.want || r.body["code"] != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.raw, tt.want, tt.code)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if msg, _ := r.body["error"].(string); msg == "" {
				t.Errorf("no error message: %s", r.raw)
			}
			if tt.code == "already_decided" {
				ap, _ := r.body["approval"].(map[string]any)
				if ap["status"] != "approved" || ap["decided_by"] != "ana" {
					t.Errorf("409 without the current approval: %s", r.raw)
				}
			}
		})
	}
	// Nothing changed.
	if n := e.audited(t); n != auditedBefore {
		t.Errorf("bad requests reached the gate: %d audit entries", n-auditedBefore)
	}
	if l, _ := e.g.List(context.Background(), ""); len(l) != 2 {
		t.Errorf("%d approvals, want the 2 made before", len(l))
	}
	if got, _ := e.g.Get(context.Background(), a.ID); got.Status != gate.StatusPending {
		t.Errorf("approval changed to %s", got.Status)
	}
	if rules, _ := e.g.Rules(context.Background(), ""); len(rules) != 0 {
		t.Errorf("rules added: %v", rules)
	}
	if m, _ := e.g.Mode(context.Background(), "alice"); m != gate.ModeInteractive {
		t.Errorf("mode changed to %s", m)
	}
}

func TestWaitParam(t *testing.T) {
	s := NewServer(Config{MaxWait: 60e9}, nil, nil)
	for _, tt := range []struct {
		in   string
		want string
		err  bool
	}{
		{"", "0s", false}, {"30s", "30s", false}, {"45", "45s", false}, {"10m", "1m0s", false},
		{"0", "0s", false}, {"-1s", "", true}, {"abc", "", true}, {"1e9", "", true}, {"99999999999", "", true},
	} {
		r, _ := http.NewRequest("GET", "/x?wait="+tt.in, nil)
		d, err := s.waitParam(r)
		if (err != nil) != tt.err || (!tt.err && d.String() != tt.want) {
			t.Errorf("wait=%q: %v %v, want %s err=%v", tt.in, d, err, tt.want, tt.err)
		}
	}
}

func TestParseTokens(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want map[string]string
		err  bool
	}{
		{"", map[string]string{}, false},
		{"alice:t1, bob:t2 ,", map[string]string{"t1": "alice", "t2": "bob"}, false},
		{"alice:t:with:colons", map[string]string{"t:with:colons": "alice"}, false},
		{"alice", nil, true},
		{"alice:", nil, true},
		{":tok", nil, true},
		{"a:same,b:same", nil, true},
	} {
		got, err := ParseTokens(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("ParseTokens(%q) err = %v", tt.in, err)
			continue
		}
		if err != nil && strings.Contains(err.Error(), "same") {
			t.Errorf("error leaks the token: %v", err)
		}
		if !tt.err && len(got) != len(tt.want) {
			t.Errorf("ParseTokens(%q) = %v, want %v", tt.in, got, tt.want)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("ParseTokens(%q)[%q] = %q, want %q", tt.in, k, got[k], v)
			}
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for in, want := range map[string]bool{
		"127.0.0.1:8754": true, "localhost:8754": true, "[::1]:8754": true, "127.1.2.3:1": true,
		":8754": false, "0.0.0.0:8754": false, "192.168.1.2:8754": false, "example.com:80": false, "": false,
	} {
		if got := IsLoopback(in); got != want {
			t.Errorf("IsLoopback(%q) = %v", in, got)
		}
	}
}

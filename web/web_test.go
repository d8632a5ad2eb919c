package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalbot/gate"
	"approvalbot/gate/gatetest"
	"approvalbot/prompt"
)

const (
	anaToken = "ana-token-0123456789abcdef"
	bobToken = "bob-token-0123456789abcdef"
)

// fixture is a real gate (in memory) with the page on an httptest server.
type fixture struct {
	env *gatetest.Env
	h   *Handler
	srv *httptest.Server
}

func newFixture(t *testing.T, tls bool, publicURL string) *fixture {
	t.Helper()
	env := gatetest.New(t, gatetest.Options{})
	h := New(Config{
		Approvers: map[string]string{anaToken: "ana", bobToken: "bob"},
		PublicURL: publicURL,
		Now:       env.Clock.Now,
		Heartbeat: 50 * time.Millisecond,
	}, env.G, nil)
	mux := http.NewServeMux()
	mux.Handle(Prefix, h)
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(mux)
	} else {
		srv = httptest.NewServer(mux)
	}
	t.Cleanup(srv.Close)
	return &fixture{env: env, h: h, srv: srv}
}

// browser is a client with a cookie jar and the session's CSRF token.
type browser struct {
	t    *testing.T
	f    *fixture
	c    *http.Client
	csrf string
}

func (f *fixture) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	c := *f.srv.Client() // a copy: each browser has its own jar
	c.Jar = jar
	return &browser{t: t, f: f, c: &c}
}

// do sends a request; body (if not nil) as JSON; hdr adds headers. The
// CSRF header is sent when the browser has a token, unless hdr sets it.
func (b *browser) do(method, path string, body any, hdr map[string]string) (int, map[string]any) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.f.srv.URL+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.csrf != "" {
		req.Header.Set(csrfHeader, b.csrf)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (b *browser) login(tok string) {
	b.t.Helper()
	code, out := b.do("POST", "/ui/api/login", map[string]string{"token": tok}, nil)
	if code != http.StatusOK {
		b.t.Fatalf("login: %d %v", code, out)
	}
	b.csrf = out["csrf"].(string)
}

func (b *browser) cookie() *http.Cookie {
	u, _ := url.Parse(b.f.srv.URL + "/ui/")
	for _, c := range b.c.Jar.Cookies(u) {
		return c
	}
	return nil
}

func decidePath(id string) string { return "/ui/api/approvals/" + id + "/decide" }

func TestSignInWithCredential(t *testing.T) {
	f := newFixture(t, false, "")
	b := f.browser(t)
	if code, out := b.do("GET", "/ui/api/session", nil, nil); code != 200 || out["signed_in"] != false {
		t.Fatalf("session before sign-in: %d %v", code, out)
	}
	if code, _ := b.do("POST", "/ui/api/login", map[string]string{"token": "not-a-token-0123456789"}, nil); code != http.StatusUnauthorized {
		t.Fatalf("wrong credential: %d, want 401", code)
	}
	req, _ := http.NewRequest("POST", f.srv.URL+"/ui/api/login", strings.NewReader(`{"token":"`+anaToken+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	set := resp.Header.Get("Set-Cookie")
	for _, want := range []string{cookieName + "=", "HttpOnly", "SameSite=Strict", "Path=/ui/"} {
		if !strings.Contains(set, want) {
			t.Errorf("Set-Cookie %q lacks %q", set, want)
		}
	}
	if strings.Contains(set, "Secure") {
		t.Errorf("Set-Cookie %q is Secure over plain http (the browser would drop it)", set)
	}
	b.login(anaToken)
	if code, out := b.do("GET", "/ui/api/session", nil, nil); code != 200 || out["signed_in"] != true || out["approver"] != "ana" {
		t.Fatalf("session after sign-in: %d %v", code, out)
	}
}

func TestSecureCookieOverHTTPS(t *testing.T) {
	f := newFixture(t, true, "")
	req, _ := http.NewRequest("POST", f.srv.URL+"/ui/api/login", strings.NewReader(`{"token":"`+anaToken+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	set := resp.Header.Get("Set-Cookie")
	for _, want := range []string{secureCookieName + "=", "Secure", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(set, want) {
			t.Errorf("Set-Cookie %q lacks %q", set, want)
		}
	}
}

func TestSecureCookieBehindHTTPSPublicURL(t *testing.T) {
	f := newFixture(t, false, "https://approvals.example.com")
	req, _ := http.NewRequest("POST", f.srv.URL+"/ui/api/login", strings.NewReader(`{"token":"`+anaToken+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if set := resp.Header.Get("Set-Cookie"); !strings.Contains(set, "Secure") || !strings.HasPrefix(set, secureCookieName) {
		t.Errorf("Set-Cookie %q: want a Secure __Host- cookie when the public URL is https", set)
	}
}

func TestOneTimeLinkSingleUse(t *testing.T) {
	f := newFixture(t, false, "")
	l, err := f.h.NewLink("bob", "http://127.0.0.1:8754")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(l.URL, "http://127.0.0.1:8754/ui/#link=") || l.Approver != "bob" {
		t.Fatalf("link %+v", l)
	}
	code := strings.TrimPrefix(l.URL, "http://127.0.0.1:8754/ui/#link=")
	b := f.browser(t)
	st, out := b.do("POST", "/ui/api/redeem", map[string]string{"code": code}, nil)
	if st != 200 || out["approver"] != "bob" {
		t.Fatalf("redeem: %d %v", st, out)
	}
	// A second device with the same link gets nothing.
	b2 := f.browser(t)
	if st, out := b2.do("POST", "/ui/api/redeem", map[string]string{"code": code}, nil); st != http.StatusUnauthorized {
		t.Fatalf("second redeem: %d %v, want 401", st, out)
	}
	if b2.cookie() != nil {
		t.Fatal("a spent link set a session cookie")
	}
}

func TestOneTimeLinkExpires(t *testing.T) {
	f := newFixture(t, false, "")
	l, _ := f.h.NewLink("ana", "http://x")
	code := l.URL[strings.Index(l.URL, "#link=")+len("#link="):]
	f.env.Clock.Advance(DefaultLinkTTL)
	b := f.browser(t)
	if st, _ := b.do("POST", "/ui/api/redeem", map[string]string{"code": code}, nil); st != http.StatusUnauthorized {
		t.Fatalf("expired link: %d, want 401", st)
	}
	if _, err := f.h.NewLink("mallory", "http://x"); err == nil {
		t.Fatal("a link for a name that is no approver")
	}
}

func TestLinkUsesPublicURL(t *testing.T) {
	f := newFixture(t, false, "https://box.tailnet.ts.net:8754/")
	l, _ := f.h.NewLink("ana", "http://127.0.0.1:8754")
	if !strings.HasPrefix(l.URL, "https://box.tailnet.ts.net:8754/ui/#link=") {
		t.Fatalf("link %q: want the public URL", l.URL)
	}
}

// TestLinksEndpoint: `approvalbot ui-link` asks for a link with its
// bearer token; the link signs in as that token's approver.
func TestLinksEndpoint(t *testing.T) {
	f := newFixture(t, false, "")
	post := func(tok string) (int, LinkBody) {
		req, _ := http.NewRequest("POST", f.srv.URL+"/ui/api/links", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var l LinkBody
		_ = json.NewDecoder(resp.Body).Decode(&l)
		return resp.StatusCode, l
	}
	if st, _ := post(""); st != http.StatusUnauthorized {
		t.Fatalf("no token: %d", st)
	}
	if st, _ := post("agent-token-0123456789"); st != http.StatusUnauthorized {
		t.Fatalf("unknown token: %d", st)
	}
	st, l := post(bobToken)
	if st != 200 || l.Approver != "bob" || !strings.HasPrefix(l.URL, f.srv.URL+"/ui/#link=") {
		t.Fatalf("links: %d %+v", st, l)
	}
	b := f.browser(t)
	if st, out := b.do("POST", "/ui/api/redeem", map[string]string{"code": l.URL[strings.Index(l.URL, "=")+1:]}, nil); st != 200 || out["approver"] != "bob" {
		t.Fatalf("redeem: %d %v", st, out)
	}
}

func TestSessionExpiresAndLogout(t *testing.T) {
	f := newFixture(t, false, "")
	b := f.browser(t)
	b.login(anaToken)
	if st, _ := b.do("GET", "/ui/api/rules", nil, nil); st != 200 {
		t.Fatalf("rules: %d", st)
	}
	if st, _ := b.do("POST", "/ui/api/logout", struct{}{}, nil); st != 200 {
		t.Fatalf("logout: %d", st)
	}
	if st, _ := b.do("GET", "/ui/api/rules", nil, nil); st != http.StatusUnauthorized {
		t.Fatalf("rules after logout: %d, want 401", st)
	}
	b.login(anaToken)
	f.env.Clock.Advance(DefaultSessionTTL)
	if st, _ := b.do("GET", "/ui/api/rules", nil, nil); st != http.StatusUnauthorized {
		t.Fatalf("rules after the session expired: %d, want 401", st)
	}
}

func TestLoginFailuresLimited(t *testing.T) {
	f := newFixture(t, false, "")
	b := f.browser(t)
	for range maxLoginFailures {
		b.do("POST", "/ui/api/login", map[string]string{"token": "wrong-wrong-wrong-wrong"}, nil)
	}
	if st, _ := b.do("POST", "/ui/api/login", map[string]string{"token": anaToken}, nil); st != http.StatusTooManyRequests {
		t.Fatalf("sign-in after %d failures: %d, want 429", maxLoginFailures, st)
	}
	f.env.Clock.Advance(loginWindow)
	b.login(anaToken)
}

// TestNoSessionCannotDecide: without a session, with another session's
// CSRF token, or with a session but no CSRF token, nothing is decided.
func TestNoSessionCannotDecide(t *testing.T) {
	f := newFixture(t, false, "")
	a := f.env.Ask(t, gatetest.Bash("npm install"))
	body := map[string]string{"choice": "approve", "digest": a.Digest[:16]}

	anon := f.browser(t)
	if st, _ := anon.do("POST", decidePath(a.ID), body, nil); st != http.StatusUnauthorized {
		t.Errorf("no session: %d, want 401", st)
	}
	other := f.browser(t)
	other.login(bobToken)
	anon.csrf = other.csrf // a token without its cookie
	if st, _ := anon.do("POST", decidePath(a.ID), body, nil); st != http.StatusUnauthorized {
		t.Errorf("a CSRF token without a session: %d, want 401", st)
	}
	if st, _ := anon.do("GET", "/ui/api/events", nil, nil); st != http.StatusUnauthorized {
		t.Errorf("events without a session: %d, want 401", st)
	}
	if st, _ := anon.do("GET", "/ui/api/history", nil, nil); st != http.StatusUnauthorized {
		t.Errorf("history without a session: %d, want 401", st)
	}

	b := f.browser(t)
	b.login(anaToken)
	if st, _ := b.do("POST", decidePath(a.ID), body, map[string]string{csrfHeader: ""}); st != http.StatusForbidden {
		t.Errorf("no CSRF token: %d, want 403", st)
	}
	if st, _ := b.do("POST", decidePath(a.ID), body, map[string]string{csrfHeader: other.csrf}); st != http.StatusForbidden {
		t.Errorf("another session's CSRF token: %d, want 403", st)
	}
	if got := f.env.Get(t, a.ID); got.Status != gate.StatusPending {
		t.Fatalf("status %s after refused requests, want pending", got.Status)
	}
}

// TestForgedCrossSitePOSTRefused: a page on another site posting to the
// daemon, with the victim's cookie (and even the right CSRF token, which it
// cannot read), is refused before any handler.
func TestForgedCrossSitePOSTRefused(t *testing.T) {
	f := newFixture(t, false, "")
	a := f.env.Ask(t, gatetest.Bash("npm install"))
	b := f.browser(t)
	b.login(anaToken)
	body := map[string]string{"choice": "approve", "digest": a.Digest[:16]}
	for _, hdr := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
		{"Sec-Fetch-Site": "same-site", "Origin": "https://sub.127.0.0.1"},
		{"Origin": "https://evil.example"}, // an older browser: no Sec-Fetch-Site
	} {
		if st, _ := b.do("POST", decidePath(a.ID), body, hdr); st != http.StatusForbidden {
			t.Errorf("%v: %d, want 403", hdr, st)
		}
	}
	// A cross-site HTML form can only send form encodings: refused too.
	req, _ := http.NewRequest("POST", f.srv.URL+decidePath(a.ID), strings.NewReader("choice=approve&digest="+a.Digest[:16]))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(csrfHeader, b.csrf)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("form-encoded decide: %d, want 400", resp.StatusCode)
	}
	if got := f.env.Get(t, a.ID); got.Status != gate.StatusPending {
		t.Fatalf("status %s after forged requests, want pending", got.Status)
	}
	// The same request from the page's own origin works.
	if st, out := b.do("POST", decidePath(a.ID), body, map[string]string{"Sec-Fetch-Site": "same-origin"}); st != 200 {
		t.Fatalf("same-origin decide: %d %v", st, out)
	}
}

func TestDecide(t *testing.T) {
	f := newFixture(t, false, "")
	b := f.browser(t)
	b.login(anaToken)

	cases := []struct {
		name       string
		body       map[string]string
		wantStatus gate.Status
		wantReason string
	}{
		{"approve", map[string]string{"choice": "approve"}, gate.StatusApproved, ""},
		{"deny with reason", map[string]string{"choice": "deny", "reason": "  use make instead "}, gate.StatusDenied, "use make instead"},
		{"deny_reason", map[string]string{"choice": "deny_reason", "reason": "no"}, gate.StatusDenied, "no"},
		{"stop", map[string]string{"choice": "stop"}, gate.StatusDeniedStop, ""},
		{"always this session", map[string]string{"choice": "always", "scope": "session"}, gate.StatusApprovedAlways, ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := f.env.Ask(t, gatetest.Bash("npm run build"+strings.Repeat(" x", i)))
			tc.body["digest"] = a.Digest[:16]
			st, out := b.do("POST", decidePath(a.ID), tc.body, nil)
			if st != 200 {
				t.Fatalf("decide: %d %v", st, out)
			}
			got := f.env.Get(t, a.ID)
			if got.Status != tc.wantStatus || got.Reason != tc.wantReason || got.DecidedBy != "ana" || got.Via != Via {
				t.Fatalf("approval: status %s reason %q by %q via %q", got.Status, got.Reason, got.DecidedBy, got.Via)
			}
			if out["status"] != string(tc.wantStatus) || out["pending"] != false {
				t.Fatalf("answer: %v", out)
			}
		})
	}
	rules, _ := f.env.G.Rules(context.Background(), "claude")
	if len(rules) != 1 || rules[0].Scope != gate.ScopeSession || rules[0].SessionID != "s1" || rules[0].CreatedBy != "ana" {
		t.Fatalf("Always rules after Always/this session: %+v", rules)
	}
}

func TestDecideRefusals(t *testing.T) {
	f := newFixture(t, false, "")
	b := f.browser(t)
	b.login(anaToken)
	a := f.env.Ask(t, gatetest.Bash("npm install"))
	for _, tc := range []struct {
		body map[string]string
		want int
	}{
		{map[string]string{"choice": "approve"}, http.StatusBadRequest},                                           // no digest
		{map[string]string{"choice": "approve", "digest": "0123456789abcdef"}, http.StatusConflict},               // another input
		{map[string]string{"choice": "always", "digest": a.Digest[:16]}, http.StatusBadRequest},                   // no scope
		{map[string]string{"choice": "yes please", "digest": a.Digest[:16]}, http.StatusBadRequest},               // unknown
		{map[string]string{"choice": "approve", "digest": a.Digest[:16], "by": "mallory"}, http.StatusBadRequest}, // unknown field
	} {
		if st, out := b.do("POST", decidePath(a.ID), tc.body, nil); st != tc.want {
			t.Errorf("%v: %d %v, want %d", tc.body, st, out, tc.want)
		}
	}
	if got := f.env.Get(t, a.ID); got.Status != gate.StatusPending {
		t.Fatalf("status %s, want pending", got.Status)
	}
	// Decided elsewhere first: 409 with the approval as it is.
	if _, err := f.env.G.Decide(context.Background(), a.ID, gate.Decision{Approve: false, Reason: "no", By: "bob", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	st, out := b.do("POST", decidePath(a.ID), map[string]string{"choice": "approve", "digest": a.Digest[:16]}, nil)
	if st != http.StatusConflict {
		t.Fatalf("decide after another decision: %d %v", st, out)
	}
	ap, _ := out["approval"].(map[string]any)
	if ap["status"] != "denied" || !strings.Contains(out["error"].(string), "bob") {
		t.Fatalf("409 body: %v", out)
	}
}

// TestAgentTextEscaped: what an agent wrote reaches the page as JSON text
// with hidden characters made visible, and the script never treats text as
// HTML.
func TestAgentTextEscaped(t *testing.T) {
	f := newFixture(t, false, "")
	cmd := "echo '<img src=x onerror=alert(1)>' \u202e# gnp.exe\u200b"
	a := f.env.Ask(t, gatetest.Bash(cmd))
	b := f.browser(t)
	b.login(anaToken)
	st, out := b.do("GET", "/ui/api/approvals/"+a.ID, nil, nil)
	if st != 200 {
		t.Fatalf("get: %d %v", st, out)
	}
	body := out["body"].(string)
	for _, want := range []string{"<img src=x onerror=alert(1)>", "⟨U+202E⟩", "⟨U+200B⟩"} {
		if !strings.Contains(body, want) {
			t.Errorf("body %q lacks %q", body, want)
		}
	}
	if strings.ContainsAny(body, "\u202e\u200b") {
		t.Errorf("body %q keeps a hidden character", body)
	}
	// The raw JSON escapes < and > as well (encoding/json's HTML escaping).
	req, _ := http.NewRequest("GET", f.srv.URL+"/ui/api/approvals/"+a.ID, nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if bytes.Contains(raw, []byte("<img")) {
		t.Errorf("raw JSON carries a literal tag: %s", raw)
	}
	js, _ := staticFS.ReadFile("static/app.js")
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
		if bytes.Contains(js, []byte(sink)) {
			t.Errorf("app.js uses %s: agent text must only be set with textContent", sink)
		}
	}
	html, _ := staticFS.ReadFile("static/index.html")
	if bytes.Contains(html, []byte("<script>")) || bytes.Contains(html, []byte(" style=")) || bytes.Contains(html, []byte(" onclick=")) {
		t.Error("index.html has inline script or style, which the CSP forbids")
	}
}

func TestSecurityHeaders(t *testing.T) {
	f := newFixture(t, false, "")
	for _, path := range []string{"/ui/", "/ui/static/app.js", "/ui/static/app.css", "/ui/api/session"} {
		resp, err := http.Get(f.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
		h := resp.Header
		if h.Get("Content-Security-Policy") != csp || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", path, h)
		}
	}
	if !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}
	resp, _ := http.Get(f.srv.URL + "/ui/static/nope.js")
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown static file: %d", resp.StatusCode)
	}
}

// TestPageWeight: the page, its script and its style together stay small.
func TestPageWeight(t *testing.T) {
	total := 0
	for _, name := range []string{"index.html", "app.js", "app.css"} {
		b, err := staticFS.ReadFile("static/" + name)
		if err != nil {
			t.Fatal(err)
		}
		total += len(b)
		for _, ext := range []string{"http://", "https://", "//cdn", "@import"} {
			if bytes.Contains(b, []byte(ext)) {
				t.Errorf("%s refers to %q: nothing may load from elsewhere", name, ext)
			}
		}
	}
	const budget = 50 << 10
	if total > budget {
		t.Errorf("page weight %d bytes, budget %d", total, budget)
	}
	t.Logf("page weight: %d bytes (html+js+css, uncompressed)", total)
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	typ  string
	data map[string]any
}

func readEvents(t *testing.T, r io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data)
			case line == "" && ev.typ != "":
				ch <- ev
				ev = sseEvent{}
			}
		}
	}()
	return ch
}

func next(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("event stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return sseEvent{}
}

func TestEvents(t *testing.T) {
	f := newFixture(t, false, "")
	before := f.env.Ask(t, gatetest.Bash("npm install"))
	b := f.browser(t)
	b.login(anaToken)
	req, _ := http.NewRequest("GET", f.srv.URL+"/ui/api/events", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	ch := readEvents(t, resp.Body)
	if ev := next(t, ch); ev.typ != "hello" || ev.data["approver"] != "ana" {
		t.Fatalf("first event %+v", ev)
	}
	if ev := next(t, ch); ev.typ != "approval" || ev.data["id"] != before.ID || ev.data["pending"] != true {
		t.Fatalf("replay %+v", ev)
	}
	a := f.env.Ask(t, gatetest.Call("Write", `{"file_path":"/etc/hosts","content":"x"}`))
	ev := next(t, ch)
	if ev.data["id"] != a.ID || ev.data["pending"] != true {
		t.Fatalf("live event %+v", ev)
	}
	if out, _ := ev.data["outside"].([]any); len(out) == 0 {
		t.Errorf("a write to /etc/hosts from /p has no outside-project paths: %v", ev.data)
	}
	if ch, _ := ev.data["choices"].([]any); len(ch) < 3 {
		t.Errorf("choices %v", ev.data["choices"])
	}
	if _, err := f.env.G.Decide(context.Background(), a.ID, gate.Decision{Approve: true, By: "bob", Via: "slack"}); err != nil {
		t.Fatal(err)
	}
	ev = next(t, ch)
	if ev.data["id"] != a.ID || ev.data["status"] != "approved" || !strings.Contains(ev.data["outcome"].(string), "bob") {
		t.Fatalf("resolved event %+v", ev)
	}
	// Signing out ends the stream.
	b.do("POST", "/ui/api/logout", struct{}{}, nil)
	for ev := range ch {
		if ev.typ == "" {
			break
		}
	}
}

func TestHistoryAndRules(t *testing.T) {
	f := newFixture(t, false, "")
	b := f.browser(t)
	b.login(anaToken)
	var last *gate.Approval
	for i := range 60 {
		a := f.env.Ask(t, gatetest.Bash("npm run build"+strings.Repeat(" y", i)))
		if _, err := f.env.G.Decide(context.Background(), a.ID, gate.Decision{Approve: true, By: "ana", Via: Via}); err != nil {
			t.Fatal(err)
		}
		last = a
	}
	a := f.env.Ask(t, gatetest.Bash("git push origin main"))
	if _, err := f.env.G.Decide(context.Background(), a.ID, gate.Decision{Approve: true, Always: true, Scope: gate.ScopeAgent, By: "ana", Via: Via}); err != nil {
		t.Fatal(err)
	}
	st, out := b.do("GET", "/ui/api/history", nil, nil)
	if st != 200 {
		t.Fatalf("history: %d %v", st, out)
	}
	entries := out["entries"].([]any)
	if len(entries) != historyPage {
		t.Fatalf("%d entries, want a page of %d", len(entries), historyPage)
	}
	seqs := []float64{}
	for _, e := range entries {
		seqs = append(seqs, e.(map[string]any)["seq"].(float64))
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]-1 {
			t.Fatalf("history not newest first without gaps: %v", seqs)
		}
	}
	foundPush, foundLast := false, false
	for _, e := range entries {
		m := e.(map[string]any)
		if m["summary"] == "git push origin main" {
			foundPush = true
		}
		if m["approval_id"] == last.ID && m["event"] == "decided" {
			foundLast = m["by"] != ""
		}
	}
	if !foundPush || !foundLast {
		t.Errorf("history lacks the newest calls (push %v, last %v): %v", foundPush, foundLast, entries[:3])
	}
	before := out["before"].(float64)
	st, out = b.do("GET", "/ui/api/history?before="+strconv.FormatUint(uint64(before), 10), nil, nil)
	if st != 200 || len(out["entries"].([]any)) == 0 || out["entries"].([]any)[0].(map[string]any)["seq"].(float64) != before-1 {
		t.Fatalf("older page: %d %v", st, out)
	}

	st, out = b.do("GET", "/ui/api/rules", nil, nil)
	rules := out["rules"].([]any)
	if st != 200 || len(rules) != 1 {
		t.Fatalf("rules: %d %v", st, out)
	}
	id := rules[0].(map[string]any)["id"].(string)
	if st, _ := b.do("POST", "/ui/api/rules/"+id+"/revoke", struct{}{}, map[string]string{csrfHeader: ""}); st != http.StatusForbidden {
		t.Fatalf("revoke without CSRF token: %d", st)
	}
	if st, out := b.do("POST", "/ui/api/rules/"+id+"/revoke", struct{}{}, nil); st != 200 {
		t.Fatalf("revoke: %d %v", st, out)
	}
	if rs, _ := f.env.G.Rules(context.Background(), ""); len(rs) != 0 {
		t.Fatalf("rules after revoke: %v", rs)
	}
	if st, _ := b.do("POST", "/ui/api/rules/"+id+"/revoke", struct{}{}, nil); st != http.StatusNotFound {
		t.Fatalf("revoke twice: %d, want 404", st)
	}
}

// fakeAudit answers Audit for lastAuditSeq.
type fakeAudit struct {
	Gate
	n uint64
}

func (f fakeAudit) Audit(_ context.Context, after uint64, limit int) ([]gate.AuditEntry, error) {
	if after >= f.n {
		return nil, nil
	}
	return []gate.AuditEntry{{Seq: after + 1}}, nil
}

func TestLastAuditSeq(t *testing.T) {
	for _, n := range []uint64{0, 1, 2, 3, 7, 8, 9, 50, 51, 1000, 1 << 20, 1<<20 + 1} {
		h := &Handler{gate: fakeAudit{n: n}}
		got, err := h.lastAuditSeq(context.Background())
		if err != nil || got != n {
			t.Errorf("n=%d: got %d, %v", n, got, err)
		}
	}
}

// TestBatch: "Approve all N" decides exactly the calls the page listed,
// each bound to the digest it showed; a call that arrived later stays.
func TestBatch(t *testing.T) {
	f := newFixture(t, false, "")
	b := f.browser(t)
	b.login(anaToken)
	a1 := f.env.Ask(t, gatetest.Bash("npm run a"))
	a2 := f.env.Ask(t, gatetest.Bash("npm run b"))
	a3 := f.env.Ask(t, gatetest.Bash("npm run c")) // arrived after the page drew its button
	members := []map[string]string{{"id": a1.ID, "digest": a1.Digest[:16]}, {"id": a2.ID, "digest": a2.Digest[:16]}}

	if st, _ := b.do("POST", "/ui/api/batch", map[string]any{"choice": "approve", "members": members}, map[string]string{csrfHeader: ""}); st != http.StatusForbidden {
		t.Fatalf("batch without CSRF token: %d", st)
	}
	if st, _ := b.do("POST", "/ui/api/batch", map[string]any{"choice": "always", "members": members}, nil); st != http.StatusBadRequest {
		t.Fatalf("batch Always: %d", st)
	}
	many := []map[string]string{}
	for i := range gate.MaxBatch + 1 {
		many = append(many, map[string]string{"id": fmt.Sprint("x", i), "digest": "0123456789abcdef"})
	}
	if st, _ := b.do("POST", "/ui/api/batch", map[string]any{"choice": "approve", "members": many}, nil); st != http.StatusBadRequest {
		t.Fatalf("batch of %d: %d", len(many), st)
	}
	st, out := b.do("POST", "/ui/api/batch", map[string]any{"choice": "deny", "reason": "not now", "members": members}, nil)
	if st != 200 {
		t.Fatalf("batch: %d %v", st, out)
	}
	if res := out["results"].([]any); len(res) != 2 || res[0].(map[string]any)["result"] != gate.BatchDecided {
		t.Fatalf("results %v", res)
	}
	for _, id := range []string{a1.ID, a2.ID} {
		if got := f.env.Get(t, id); got.Status != gate.StatusDenied || got.Reason != "not now" || got.DecidedBy != "ana" || got.Via != Via {
			t.Errorf("%s: %s %q by %q via %q", id, got.Status, got.Reason, got.DecidedBy, got.Via)
		}
	}
	if got := f.env.Get(t, a3.ID); got.Status != gate.StatusPending {
		t.Fatalf("a call the batch did not list: %s, want pending", got.Status)
	}
	// A digest for another input decides nothing of that call.
	st, out = b.do("POST", "/ui/api/batch", map[string]any{"choice": "approve", "members": []map[string]string{{"id": a3.ID, "digest": "0123456789abcdef"}}}, nil)
	if res := out["results"].([]any); st != 200 || res[0].(map[string]any)["result"] != gate.BatchDigestMismatch {
		t.Fatalf("batch with another digest: %d %v", st, out)
	}
	if got := f.env.Get(t, a3.ID); got.Status != gate.StatusPending {
		t.Fatalf("after a digest mismatch: %s, want pending", got.Status)
	}
}

// TestDecideAlwaysWithExpiry: the page offers the same Always choices as
// chat (scope and expiry); "This agent, 1 hour" saves an agent rule that
// expires an hour after the press, "no expiry" one that never does.
func TestDecideAlwaysWithExpiry(t *testing.T) {
	f := newFixture(t, false, "")
	b := f.browser(t)
	b.login(anaToken)
	a := f.env.Ask(t, gatetest.Bash("npm run lint"))
	st, out := b.do("GET", "/ui/api/approvals/"+a.ID, nil, nil)
	if st != 200 {
		t.Fatalf("get: %d %v", st, out)
	}
	var keys []string
	for _, s := range out["scopes"].([]any) {
		keys = append(keys, s.(map[string]any)["key"].(string))
	}
	var want []string
	for _, s := range prompt.AlwaysChoices {
		want = append(want, s.Key)
	}
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Fatalf("scopes offered %v, want prompt.AlwaysChoices %v", keys, want)
	}
	now := f.env.Clock.Now()
	st, out = b.do("POST", decidePath(a.ID), map[string]string{"choice": "always", "scope_key": prompt.ScopeKeyHour, "digest": a.Digest[:16]}, nil)
	if st != 200 {
		t.Fatalf("decide: %d %v", st, out)
	}
	rules, _ := f.env.G.Rules(context.Background(), "claude")
	if len(rules) != 1 || rules[0].Scope != gate.ScopeAgent || rules[0].ExpiresAt == nil || !rules[0].ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("Always rules after 'This agent, 1 hour': %+v", rules)
	}
	a2 := f.env.Ask(t, gatetest.Bash("make lint"))
	if st, out := b.do("POST", decidePath(a2.ID), map[string]string{"choice": "always", "scope_key": "forever-and-ever", "digest": a2.Digest[:16]}, nil); st != 400 {
		t.Fatalf("unknown choice: %d %v, want 400", st, out)
	}
	if got := f.env.Get(t, a2.ID); got.Status != gate.StatusPending {
		t.Fatalf("a refused choice changed the approval: %s", got.Status)
	}
}

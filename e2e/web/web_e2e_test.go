//go:build e2e

package e2eweb

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"approvalbot/api"
	"approvalbot/config"
	"approvalbot/e2e/e2etest"
	"approvalbot/gate"
)

// Limits and targets of the test.
const (
	waitDeadline = 30 * time.Second
	// latencyTarget is the target for submit → shown on loopback.
	latencyTarget = 200 * time.Millisecond
	// weightBudget is the page weight budget (html, js, css).
	weightBudget = 50 << 10
	latencyRuns  = 20
)

// TestWebPage runs the page in a real browser against a real daemon: sign
// in with the link serve printed, live calls without a reload, Approve
// and Deny with a typed reason reaching the waiting clients, a decision
// made elsewhere updating the page, a page without a session and a forged
// cross-site POST deciding nothing; it measures latency and weight and
// saves screenshots.
func TestWebPage(t *testing.T) {
	dir := t.TempDir()
	bin := e2etest.BuildBinary(t, dir)
	d := startServe(t, bin, dir)
	agent := api.NewClient(d.url, "") // no token: an open loopback daemon
	tok, err := config.ReadApproverToken(filepath.Join(dir, "data"), true)
	if err != nil {
		t.Fatal(err)
	}
	person := api.NewClient(d.url, tok)

	b := newBrowser(t)
	ctx := b.ctx

	// Sign in with the one-time link serve printed at start.
	run(t, ctx, "open the sign-in link", chromedp.Navigate(d.link), chromedp.WaitVisible(chromedp.ID("redeem")))
	if got := evalString(t, ctx, `location.hash`); got != "" {
		t.Errorf("the link's code stays in the address bar: %q", got)
	}
	run(t, ctx, "sign in", chromedp.Click(chromedp.ID("redeem")), chromedp.WaitVisible(chromedp.ID("tabs")))
	waitText(t, ctx, "#conn", "live")
	waitText(t, ctx, "#who", "local-approver")
	b.checkRequests(t, d.url)
	weight := b.pageWeight()
	t.Logf("page weight: %d bytes transferred (html+js+css), %d requests, all to %s", weight, len(b.urls()), d.url)
	if weight > weightBudget || weight == 0 {
		t.Errorf("page weight %d bytes, budget %d", weight, weightBudget)
	}

	// Record when each card appears, in the page's clock (the same
	// machine's clock as ours).
	evalString(t, ctx, `(() => { window.__seen = {}; new MutationObserver(() => {
		for (const c of document.querySelectorAll('article.card')) if (!(c.dataset.id in window.__seen)) window.__seen[c.dataset.id] = Date.now();
	}).observe(document.getElementById('cards'), {childList: true}); return ''; })()`)

	// Latency: submit → card shown, without a reload.
	var lat []time.Duration
	for i := range latencyRuns {
		call := bash(dir, "s-lat", fmt.Sprintf("npm run latency-%d", i))
		t0 := time.Now()
		a, err := agent.Submit(context.Background(), call, 0)
		if err != nil || a.Status != gate.StatusPending {
			t.Fatalf("submit: %v %+v", err, a)
		}
		sel := cardSel(a.ID)
		run(t, ctx, "the card of "+a.ID, chromedp.WaitVisible(chromedp.CSS(sel)))
		shown := int64(evalInt(t, ctx, fmt.Sprintf(`window.__seen[%q] || 0`, a.ID)))
		lat = append(lat, time.UnixMilli(shown).Sub(t0))
		if _, err := person.Deny(context.Background(), a.ID, "latency run", false, "e2e"); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(lat)
	median, worst := lat[len(lat)/2], lat[len(lat)-1]
	t.Logf("submit → shown on loopback, %d runs: median %s, p90 %s, max %s (target %s)", len(lat), median, lat[len(lat)*9/10], worst, latencyTarget)
	if median > latencyTarget {
		t.Errorf("median submit → shown %s, target %s", median, latencyTarget)
	}
	waitGone(t, ctx, "article.card.done") // resolved cards leave after a while

	// Approve: the waiting client gets allow.
	approved := submitAndWait(agent, bash(dir, "s1", "npm publish --access public"))
	id := cardWithText(t, ctx, "npm publish --access public")
	run(t, ctx, "Approve", chromedp.WaitEnabled(chromedp.CSS(cardSel(id)+" .actions button.approve")),
		chromedp.Click(chromedp.CSS(cardSel(id)+" .actions button.approve")))
	r := wait(t, approved)
	if r.err != nil || r.a.Status != gate.StatusApproved || r.a.Decision != gate.Allow || r.a.DecidedBy != "local-approver" || r.a.Via != "web" {
		t.Fatalf("approved call: %+v, %v; want allow by local-approver via web", r.a, r.err)
	}
	waitText(t, ctx, cardSel(id)+" .outcome", "Approved by local-approver")

	// Deny with a typed reason: the reason reaches the client.
	denied := submitAndWait(agent, bash(dir, "s1", "rm -rf build/ dist/"))
	id = cardWithText(t, ctx, "rm -rf build/ dist/")
	run(t, ctx, "Deny with a reason",
		chromedp.WaitEnabled(chromedp.CSS(cardSel(id)+" .actions button.deny")),
		chromedp.Click(chromedp.CSS(cardSel(id)+" .actions button.deny")),
		chromedp.WaitVisible(chromedp.CSS(cardSel(id)+" .panel-reason input")),
		chromedp.SendKeys(chromedp.CSS(cardSel(id)+" .panel-reason input"), "use make clean instead"),
		chromedp.Click(chromedp.CSS(cardSel(id)+" .panel-reason button.deny")))
	r = wait(t, denied)
	if r.err != nil || r.a.Status != gate.StatusDenied || r.a.Decision != gate.Deny || r.a.Reason != "use make clean instead" {
		t.Fatalf("denied call: %+v, %v; want deny with the typed reason", r.a, r.err)
	}
	waitText(t, ctx, cardSel(id)+" .outcome", "use make clean instead")

	// A decision made elsewhere (the CLI's API) updates the page.
	elsewhere := submitAndWait(agent, bash(dir, "s2", "docker compose down -v"))
	id = cardWithText(t, ctx, "docker compose down -v")
	if _, err := person.Approve(context.Background(), id, false, "", "ana@laptop"); err != nil {
		t.Fatal(err)
	}
	wait(t, elsewhere)
	waitText(t, ctx, cardSel(id)+" .outcome", "Approved by local-approver (ana@laptop) via CLI")
	if n := evalInt(t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length`, cardSel(id)+" .actions button")); n != 0 {
		t.Errorf("a card decided elsewhere keeps %d buttons", n)
	}

	// Approve all: two calls of one session, one press, both clients get allow.
	firstOfTwo := submitAndWait(agent, bash(dir, "s-batch", "make lint"))
	cardWithText(t, ctx, "make lint")
	secondOfTwo := submitAndWait(agent, bash(dir, "s-batch", "make test"))
	cardWithText(t, ctx, "make test")
	run(t, ctx, "Approve all 2",
		chromedp.WaitEnabled(chromedp.CSS("#batches .batch button.approve")),
		chromedp.Click(chromedp.CSS("#batches .batch button.approve")))
	for _, ch := range []<-chan result{firstOfTwo, secondOfTwo} {
		if r := wait(t, ch); r.err != nil || r.a.Status != gate.StatusApproved || r.a.Via != "web" {
			t.Fatalf("a call of the approved batch: %+v, %v", r.a, r.err)
		}
	}
	waitGone(t, ctx, "#batches .batch")

	// A forged cross-site POST from another origin on this host (same
	// site for cookies, so the session cookie may even go along) decides
	// nothing: a form (text/plain JSON) and a no-cors fetch.
	target := submitAndWait(agent, bash(dir, "s3", "git push --force origin main"))
	id = cardWithText(t, ctx, "git push --force origin main")
	var digest string
	if a, err := person.Get(context.Background(), id, 0); err == nil {
		digest = a.Digest[:16]
	}
	evil := evilSite(t, d.url+"/ui/api/approvals/"+id+"/decide", digest)
	run(t, ctx, "the forged fetch", chromedp.Navigate(evil.URL+"/fetch"), chromedp.WaitVisible(chromedp.ID("fired")))
	run(t, ctx, "the forged form", chromedp.Navigate(evil.URL+"/form"))
	forged := b.posts("/ui/api/approvals/" + id + "/decide")
	if len(forged) < 2 {
		t.Fatalf("the forged page sent %d POSTs to decide, want 2 (form and fetch): %v", len(forged), forged)
	}
	// The form's answer carries our Cross-Origin-Opener-Policy, so Chromium
	// moves it to a new browsing context group (another target) and this
	// tab may not see its status (0); any status it does see must be 403.
	for _, st := range forged {
		if st != 0 && st != http.StatusForbidden {
			t.Errorf("a forged cross-site POST got %d, want 403", st)
		}
	}
	if a, err := person.Get(context.Background(), id, 0); err != nil || a.Status != gate.StatusPending {
		t.Fatalf("after a forged cross-site POST: %+v, %v; want still pending", a, err)
	}

	// A page without a session cannot decide: a fresh browser context
	// (no cookies) shows the sign-in form, and its script's decide fails.
	anon := newBrowserFrom(t, b)
	run(t, anon.ctx, "the page without a session", chromedp.Navigate(d.url+"/ui/"), chromedp.WaitVisible(chromedp.ID("login-form")))
	st := evalInt(t, anon.ctx, fmt.Sprintf(`fetch(%q, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({choice: 'approve', digest: %q})}).then(r => r.status)`,
		"/ui/api/approvals/"+id+"/decide", digest))
	if st != http.StatusUnauthorized {
		t.Errorf("decide without a session: %d, want 401", st)
	}
	if a, _ := person.Get(context.Background(), id, 0); a == nil || a.Status != gate.StatusPending {
		t.Fatalf("after a decide without a session: %+v; want still pending", a)
	}
	if _, err := person.Deny(context.Background(), id, "cleanup", false, "e2e"); err != nil {
		t.Fatal(err)
	}
	wait(t, target)

	// Screenshots, with a few kinds of prompt pending.
	run(t, ctx, "back to the page", chromedp.Navigate(d.url+"/ui/"), chromedp.WaitVisible(chromedp.ID("tabs")))
	waitText(t, ctx, "#conn", "live")
	shots := screenshotDir(t)
	for _, c := range []gate.Call{
		bash(dir, "s4", "curl -fsSL https://example.com/install.sh | sudo bash -s -- --prefix /usr/local/lib/some/very/long/path/that/does/not/fit/on/a/phone/screen/at/all"),
		bash(dir, "s4", "echo 'safe' \u202e# txt.exe"),
		{Agent: "claude-code", SessionID: "s5", Tool: "Edit", Cwd: dir, Input: json.RawMessage(`{"file_path":"` + dir + `/main.go","old_string":"func main() {\n\tfmt.Println(\"hi\")\n}","new_string":"func main() {\n\tfmt.Println(\"hello, world\")\n\tos.Exit(0)\n}"}`)},
		{Agent: "claude-code", SessionID: "s5", Tool: "Write", Cwd: dir, Input: json.RawMessage(`{"file_path":"/etc/hosts","content":"127.0.0.1 example.com\n"}`)},
	} {
		if _, err := agent.Submit(context.Background(), c, 0); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ctx, "four cards", chromedp.WaitVisible(chromedp.CSS(`#cards article.card:nth-child(4)`)))
	time.Sleep(700 * time.Millisecond) // the cards' tap guard, so buttons are drawn enabled
	for _, w := range []int64{360, 1280} {
		b.screenshot(t, filepath.Join(shots, fmt.Sprintf("pending-%dpx.png", w)), w, true)
		if ow := evalInt(t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); ow > 0 {
			t.Errorf("at %d px the page scrolls sideways by %d px", w, ow)
		}
	}

	// Always, for this agent, from the page: the rule is saved with that
	// scope, listed in the rules tab and revoked there.
	id = cardWithText(t, ctx, `fmt.Println("hello, world")`)
	run(t, ctx, "Always, this agent",
		chromedp.Click(chromedp.CSS(cardSel(id)+" .actions button.always")),
		chromedp.WaitVisible(chromedp.CSS(cardSel(id)+" .panel-scope button")),
		chromedp.Click(chromedp.CSS(cardSel(id)+` .panel-scope button.always:last-of-type`)))
	poll(t, "the Edit call approved always", func() bool {
		a, err := person.Get(context.Background(), id, 0)
		return err == nil && a.Status == gate.StatusApprovedAlways
	})
	// The gate saves the rule just after it records the decision.
	var rules []gate.AlwaysRule
	poll(t, "the Always rule", func() bool {
		rules, err = person.Rules(context.Background(), "")
		return err == nil && len(rules) > 0
	})
	if len(rules) != 1 || rules[0].Scope != gate.ScopeAgent || rules[0].Tool != "Edit" {
		t.Fatalf("Always rules after Always/this agent: %+v", rules)
	}

	run(t, ctx, "history", chromedp.Click(chromedp.CSS(`#tabs button[data-tab="history"]`)), chromedp.WaitVisible(chromedp.CSS("#history-list li")))
	b.screenshot(t, filepath.Join(shots, "history-360px.png"), 360, false)
	run(t, ctx, "rules", chromedp.Click(chromedp.CSS(`#tabs button[data-tab="rules"]`)), chromedp.WaitVisible(chromedp.CSS("#rules-list li")))
	b.screenshot(t, filepath.Join(shots, "rules-360px.png"), 360, false)
	run(t, ctx, "revoke (two taps)",
		chromedp.Click(chromedp.CSS("#rules-list li button.deny")),
		chromedp.Click(chromedp.CSS("#rules-list li button.deny")),
		chromedp.WaitVisible(chromedp.ID("rules-empty")))
	if rules, err := person.Rules(context.Background(), ""); err != nil || len(rules) != 0 {
		t.Fatalf("Always rules after revoke: %+v, %v", rules, err)
	}
	run(t, ctx, "back to pending", chromedp.Click(chromedp.CSS(`#tabs button[data-tab="pending"]`)))
	run(t, anon.ctx, "sign-in page", chromedp.Navigate(d.url+"/ui/"), chromedp.WaitVisible(chromedp.ID("login-form")))
	anon.screenshot(t, filepath.Join(shots, "signin-360px.png"), 360, false)
	t.Logf("screenshots in %s", shots)

	// The agent's text is text: the bidi character is shown as a marker,
	// and the page has exactly the one script it loads.
	if txt := evalString(t, ctx, `[...document.querySelectorAll('article.card')].map(c => c.textContent).join('\n')`); !strings.Contains(txt, "⟨U+202E⟩") || strings.Contains(txt, "\u202e") {
		t.Errorf("the bidi override is not made visible in the page")
	}
	if n := evalInt(t, ctx, `document.scripts.length`); n != 1 {
		t.Errorf("%d scripts in the page, want 1", n)
	}
}

// ---- the daemon ----

type daemon struct {
	url  string
	link string
	logs string // serve's output file
}

func (d *daemon) logsText() string {
	b, _ := os.ReadFile(d.logs)
	return string(b)
}

var linkRE = regexp.MustCompile(`http://\S+/ui/#link=[A-Za-z0-9_-]+`)

func startServe(t *testing.T, bin, dir string) *daemon {
	t.Helper()
	rules := filepath.Join(dir, "rules.jsonc")
	if err := os.WriteFile(rules, []byte(`{"*": "ask"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := e2etest.FreeAddr(t)
	logPath := filepath.Join(dir, "serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		"APPROVALBOT_DATA_DIR="+filepath.Join(dir, "data"),
		"APPROVALBOT_LISTEN="+addr,
		"APPROVALBOT_RULES="+rules,
		"APPROVALBOT_TIMEOUT=5m",
		"APPROVALBOT_LOG_LEVEL=debug",
		"APPROVALBOT_TELEGRAM_TOKEN=", "APPROVALBOT_SLACK_BOT_TOKEN=", "APPROVALBOT_API_TOKENS=", "APPROVALBOT_ADMIN_TOKENS=",
		"APPROVALBOT_PUBLIC_URL=", "APPROVALBOT_TLS_CERT=", "APPROVALBOT_TLS_KEY=",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("serve log:\n%s", b)
		}
		logf.Close()
	})
	d := &daemon{url: "http://" + addr, logs: logPath}
	poll(t, "the daemon to answer /healthz", func() bool {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("serve exited: %v", err)
		default:
		}
		resp, err := http.Get(d.url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	// serve's log holds no live link (an agent may read a log): the
	// person makes one, as README says.
	if linkRE.MatchString(d.logsText()) {
		t.Fatalf("serve printed a live sign-in link into its log")
	}
	uiLink := exec.Command(bin, "ui-link", "--no-qr")
	uiLink.Env = append(os.Environ(), "APPROVALBOT_DATA_DIR="+filepath.Join(dir, "data"), "APPROVALBOT_URL="+d.url, "APPROVALBOT_TOKEN=")
	out, err := uiLink.CombinedOutput()
	if err != nil {
		t.Fatalf("approvalbot ui-link: %v\n%s", err, out)
	}
	if d.link = linkRE.FindString(string(out)); d.link == "" {
		t.Fatalf("approvalbot ui-link printed no link:\n%s", out)
	}
	return d
}

type result struct {
	a   *gate.Approval
	err error
}

func bash(cwd, session, cmd string) gate.Call {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return gate.Call{Agent: "claude-code", SessionID: session, Tool: "Bash", Input: in, Cwd: cwd}
}

// submitAndWait is an agent's hook: it submits and waits for the person.
func submitAndWait(c *api.Client, call gate.Call) <-chan result {
	ch := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*waitDeadline)
		defer cancel()
		a, err := c.SubmitAndWait(ctx, call, 10*time.Second)
		ch <- result{a, err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitDeadline):
		t.Fatal("a waiting client got no answer")
	}
	return result{}
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// evilSite serves pages on another origin of this host that post a
// decision to target on load: /form an auto-submitted form whose
// text/plain body is JSON, /fetch a no-cors fetch with the cookies.
func evilSite(t *testing.T, target, digest string) *httptest.Server {
	t.Helper()
	body := fmt.Sprintf(`{"choice":"approve","digest":%q}`, digest)
	form := fmt.Sprintf(`<!doctype html><html><body onload="document.forms[0].submit()">
<form method="POST" action=%q enctype="text/plain"><input name='%s' value=''></form>
</body></html>`, target, strings.TrimSuffix(body, "}")+`,"x":"`)
	fetch := fmt.Sprintf(`<!doctype html><html><body><script>
fetch(%q, {method: 'POST', mode: 'no-cors', credentials: 'include', headers: {'Content-Type': 'text/plain'}, body: %q})
  .catch(() => {})
  .finally(() => { const p = document.createElement('p'); p.id = 'fired'; p.textContent = 'fired'; document.body.appendChild(p); });
</script></body></html>`, target, body)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if strings.HasSuffix(r.URL.Path, "/form") {
			fmt.Fprint(w, form)
			return
		}
		fmt.Fprint(w, fetch)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// ---- the browser ----

type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	reqs   map[network.RequestID]string
	method map[network.RequestID]string
	types  map[network.RequestID]network.ResourceType
	weight map[network.RequestID]float64
	status map[network.RequestID]int64
}

// posts returns the statuses of the POSTs sent to a URL ending in path (0
// for one whose answer this tab did not see), polling until two were sent
// and one was answered, or the deadline passed.
func (b *browser) posts(path string) []int64 {
	var out []int64
	deadline := time.Now().Add(5 * time.Second)
	for {
		out = out[:0]
		b.mu.Lock()
		for id, u := range b.reqs {
			if b.method[id] == "POST" && strings.HasSuffix(u, path) {
				out = append(out, b.status[id])
			}
		}
		b.mu.Unlock()
		if (len(out) >= 2 && slices.Max(out) > 0) || time.Now().After(deadline) {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("headless Chromium is needed (apt-get install -y chromium)")
	return ""
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelA)
	return startTab(t, actx)
}

// newBrowserFrom opens a fresh browser context (its own cookies) in b's
// browser process.
func newBrowserFrom(t *testing.T, b *browser) *browser {
	t.Helper()
	return startTab(t, b.ctx, chromedp.WithNewBrowserContext())
}

func startTab(t *testing.T, parent context.Context, opts ...chromedp.ContextOption) *browser {
	t.Helper()
	ctx, cancel := chromedp.NewContext(parent, opts...)
	t.Cleanup(cancel)
	b := &browser{ctx: ctx, reqs: map[network.RequestID]string{}, method: map[network.RequestID]string{},
		types: map[network.RequestID]network.ResourceType{}, weight: map[network.RequestID]float64{}, status: map[network.RequestID]int64{}}
	// The first call starts the browser (or tab) and must not have a
	// timeout: its context's end would stop the browser.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start the browser: %v", err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.reqs[ev.RequestID] = ev.Request.URL
			b.method[ev.RequestID] = ev.Request.Method
			b.types[ev.RequestID] = ev.Type
		case *network.EventResponseReceived:
			b.status[ev.RequestID] = ev.Response.Status
		case *network.EventLoadingFinished:
			b.weight[ev.RequestID] = ev.EncodedDataLength
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("enable network events: %v", err)
	}
	return b
}

func (b *browser) urls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, u := range b.reqs {
		out = append(out, u)
	}
	return out
}

// checkRequests: everything the page loaded came from the daemon.
func (b *browser) checkRequests(t *testing.T, origin string) {
	t.Helper()
	for _, u := range b.urls() {
		if !strings.HasPrefix(u, origin+"/") {
			t.Errorf("the page requested %s, outside %s", u, origin)
		}
	}
}

// pageWeight is the bytes transferred for the document, its script and
// its style (headers included).
func (b *browser) pageWeight() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	total := 0.0
	for id, typ := range b.types {
		switch typ {
		case network.ResourceTypeDocument, network.ResourceTypeScript, network.ResourceTypeStylesheet:
			total += b.weight[id]
		}
	}
	return int(total)
}

// screenshot saves the page at width: the whole page, or the first screen.
func (b *browser) screenshot(t *testing.T, path string, width int64, full bool) {
	t.Helper()
	run(t, b.ctx, "viewport", chromedp.EmulateViewport(width, 800), chromedp.Sleep(200*time.Millisecond)) // let the layout settle
	tctx, cancel := context.WithTimeout(b.ctx, waitDeadline)
	defer cancel()
	shot := chromedp.CaptureScreenshot()
	if full {
		shot = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(tctx, shot)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func screenshotDir(t *testing.T) string {
	dir := os.Getenv("APPROVALBOT_E2E_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "approvalbot-e2e-web", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, waitDeadline)
	defer cancel()
	if err := chromedp.Do(tctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, waitDeadline)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %.80q: %v", js, err)
	}
	return v
}

func evalString(t *testing.T, ctx context.Context, js string) string {
	t.Helper()
	return eval[string](t, ctx, js)
}

func evalInt(t *testing.T, ctx context.Context, js string) int {
	t.Helper()
	return eval[int](t, ctx, js)
}

func cardSel(id string) string { return fmt.Sprintf(`article.card[data-id=%q]`, id) }

// cardWithText waits for the pending card showing text and returns its id.
func cardWithText(t *testing.T, ctx context.Context, text string) string {
	t.Helper()
	var id string
	poll(t, "a card showing "+text, func() bool {
		id = evalString(t, ctx, fmt.Sprintf(`(() => { const c = [...document.querySelectorAll('article.card:not(.done)')].find(c => c.textContent.includes(%q)); return c ? c.dataset.id : ''; })()`, text))
		return id != ""
	})
	return id
}

func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	var got string
	poll(t, fmt.Sprintf("%s to show %q", sel, want), func() bool {
		got = evalString(t, ctx, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e && !e.closest('[hidden]') ? e.textContent : ''; })()`, sel))
		return strings.Contains(got, want)
	})
}

func waitGone(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	poll(t, sel+" to go", func() bool {
		return evalInt(t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)) == 0
	})
}

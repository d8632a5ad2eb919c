package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalbot/gate"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestClientEndpoints(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, tokenConfig())
	admin, alice := e.client(tokAdmin), e.client(tokAlice)
	input := json.RawMessage(`{"file_path":"/src/a.go"}`)

	// Allowed at once: the short answer (such calls are audited, not kept
	// as approvals).
	a, err := alice.Submit(ctx, gate.Call{Tool: "Read", Input: input}, 0)
	if err != nil || a.Status != gate.StatusAllowed || a.Decision != gate.Allow || a.Agent != "alice" {
		t.Fatalf("allowed submit: %v %+v", err, a)
	}
	if len(a.Input) != 0 || len(a.Evaluation.Commands) != 0 {
		t.Errorf("the at-once answer carries the input or evaluation: %s %+v", a.Input, a.Evaluation)
	}
	if a, err = alice.Submit(ctx, gate.Call{Tool: "Nope"}, 0); err != nil || a.Status != gate.StatusDenied {
		t.Fatalf("denied submit: %v %+v", err, a)
	}
	// Pending, idempotent.
	call := gate.Call{SessionID: "s1", Tool: "Bash", Input: json.RawMessage(`{"command":"make"}`), IdempotencyKey: "tu1"}
	p1, err := alice.Submit(ctx, call, 0)
	if err != nil || p1.Status != gate.StatusPending || p1.Decision != "" {
		t.Fatalf("pending submit: %v %+v", err, p1)
	}
	p2, err := alice.Submit(ctx, call, 0)
	if err != nil || p2.ID != p1.ID {
		t.Fatalf("re-submit made a new approval: %v %s != %s", err, p2.ID, p1.ID)
	}
	list, err := admin.List(ctx, gate.StatusPending)
	if err != nil || len(list) != 1 || list[0].ID != p1.ID {
		t.Fatalf("list: %v %+v", err, list)
	}
	got, err := alice.Get(ctx, p1.ID, 0)
	if err != nil || got.ID != p1.ID || got.Digest == "" {
		t.Fatalf("get: %v %+v", err, got)
	}
	// Approve always, then a second decision is ErrAlreadyDecided with the approval.
	ap, err := admin.Approve(ctx, p1.ID, true, gate.ScopeSession, "ana@laptop")
	if err != nil || ap.Status != gate.StatusApprovedAlways || ap.Via != "cli" {
		t.Fatalf("approve: %v %+v", err, ap)
	}
	_, err = admin.Deny(ctx, p1.ID, "late", false, "bo")
	var apiErr *Error
	if !errors.Is(err, gate.ErrAlreadyDecided) || !errors.As(err, &apiErr) || apiErr.Approval == nil || apiErr.Approval.Status != gate.StatusApprovedAlways {
		t.Fatalf("second decision: %v", err)
	}
	if _, err := admin.Get(ctx, "nope", 0); !errors.Is(err, gate.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	// Deny with stop; cancel.
	p3, _ := alice.Submit(ctx, gate.Call{Tool: "Bash", Input: json.RawMessage(`{"command":"rm x"}`)}, 0)
	if d, err := admin.Deny(ctx, p3.ID, "not now", true, "ana"); err != nil || d.Status != gate.StatusDeniedStop || d.Reason != "not now" {
		t.Fatalf("deny: %v %+v", err, d)
	}
	p4, _ := alice.Submit(ctx, gate.Call{Tool: "Bash", Input: json.RawMessage(`{"command":"rm y"}`)}, 0)
	if c, err := alice.Cancel(ctx, p4.ID, "hook killed"); err != nil || c.Status != gate.StatusCancelled {
		t.Fatalf("cancel: %v %+v", err, c)
	}
	// Rules.
	rules, err := admin.Rules(ctx, "alice")
	if err != nil || len(rules) != 1 || rules[0].Scope != gate.ScopeSession {
		t.Fatalf("rules after always: %v %+v", err, rules)
	}
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	r, err := admin.AddRule(ctx, gate.AlwaysRule{ID: "ignored", Agent: "bob", Tool: "Bash", Pattern: "git log *", ExpiresAt: &exp})
	if err != nil || r.ID == "" || r.ID == "ignored" || r.CreatedBy != "ana" || r.Scope != gate.ScopeAgent || !r.ExpiresAt.Equal(exp) {
		t.Fatalf("add rule: %v %+v", err, r)
	}
	if err := admin.DeleteRule(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if err := admin.DeleteRule(ctx, r.ID); !errors.Is(err, gate.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	if _, err := alice.Rules(ctx, ""); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("agent listing rules: %v", err)
	}
	// Modes.
	if m, err := admin.Mode(ctx, "alice"); err != nil || m != gate.ModeInteractive {
		t.Fatalf("mode: %v %s", err, m)
	}
	if err := admin.SetMode(ctx, "alice", gate.ModeStrict); err != nil {
		t.Fatal(err)
	}
	if m, _ := admin.Mode(ctx, "alice"); m != gate.ModeStrict {
		t.Fatalf("mode after set: %s", m)
	}
	// Audit: every answer, decision and change above, in order, chained.
	entries, err := admin.Audit(ctx, 0, 0)
	if err != nil || len(entries) < 6 {
		t.Fatalf("audit: %v %+v", err, entries)
	}
	decided := map[string]string{} // approval id → by
	for i, en := range entries {
		if en.Seq != uint64(i+1) {
			t.Fatalf("audit entry %d has seq %d", i, en.Seq)
		}
		if en.Event == "decided" {
			decided[en.ApprovalID] = en.By
		}
	}
	if _, cancelled := decided[p4.ID]; decided[p1.ID] != "ana (ana@laptop)" || decided[p3.ID] != "ana" || !cancelled {
		t.Errorf("decisions audited: %v", decided)
	}
	if page, _ := admin.Audit(ctx, 1, 5); len(page) != 5 || page[0].Seq != 2 || page[4].Seq != 6 {
		t.Fatalf("audit after 1, limit 5: %+v", page)
	}
	if n, err := admin.VerifyAudit(ctx); err != nil || n != len(entries) {
		t.Fatalf("verify: %v %d, want %d", err, n, len(entries))
	}
	e.store.Tamper("audit chain broken at seq 2")
	if _, err := admin.VerifyAudit(ctx); !errors.Is(err, ErrAuditBroken) || !strings.Contains(err.Error(), "seq 2") {
		t.Fatalf("verify broken: %v", err)
	}
	// Health.
	if h, err := alice.Health(ctx); err != nil || !h.OK {
		t.Fatalf("health: %v %+v", err, h)
	}
	e.g.SetRulesError("rules.jsonc:3: bad action")
	if h, err := NewClient(e.ts.URL, "").Health(ctx); err != nil || h.OK || h.RulesError == "" {
		t.Fatalf("unhealthy: %v %+v", err, h)
	}
	if r := e.call(t, "GET", "/healthz", "", ""); r.status != 503 {
		t.Fatalf("unhealthy status %d", r.status)
	}
}

func TestSubmitRulesField(t *testing.T) {
	e := newEnv(t, Config{Open: true})
	r := e.call(t, "POST", "/v1/calls", "", `{"agent":"a","tool":"Read","input":{"file_path":"/src/x"}}`)
	rules, _ := r.body["rules"].([]any)
	if r.status != 200 || len(rules) != 1 || r.body["decision"] != "allow" || r.body["status"] != "allowed" {
		t.Fatalf("got %d %s", r.status, r.raw)
	}
	if _, has := r.body["input"]; has {
		t.Fatalf("the at-once answer repeats the input: %s", r.raw)
	}
	r = e.call(t, "POST", "/v1/calls", "", `{"agent":"a","tool":"Bash","input":{"command":"make x"}}`)
	if in, _ := r.body["input"].(map[string]any); in["command"] != "make x" {
		t.Fatalf("pending answer: input not a JSON object: %s", r.raw)
	}
	r = e.call(t, "POST", "/v1/calls", "", `{"agent":"a","tool":"Bash"}`)
	if _, has := r.body["decision"]; has || r.body["status"] != "pending" {
		t.Fatalf("pending answer has a decision: %s", r.raw)
	}
}

func TestDecidingRules(t *testing.T) {
	allow := &gate.RuleRef{Layer: gate.LayerStatic, Line: 2, Action: gate.Allow}
	deny := &gate.RuleRef{Layer: gate.LayerStatic, Line: 3, Action: gate.Deny}
	ask := &gate.RuleRef{Layer: gate.LayerDefault, Action: gate.Ask}
	for _, tt := range []struct {
		name string
		ev   gate.Evaluation
		want []gate.RuleRef
	}{
		{"deny wins", gate.Evaluation{Decision: gate.Deny, Commands: []gate.Verdict{{Decision: gate.Allow, Rule: allow}, {Decision: gate.Deny, Rule: deny}}}, []gate.RuleRef{*deny}},
		{"all allows, deduplicated", gate.Evaluation{Decision: gate.Allow, Commands: []gate.Verdict{{Decision: gate.Allow, Rule: allow}, {Decision: gate.Allow, Rule: allow}}}, []gate.RuleRef{*allow}},
		{"fallback to whole rule", gate.Evaluation{Decision: gate.Ask, Rule: ask, Commands: []gate.Verdict{{Decision: gate.Ask}}}, []gate.RuleRef{*ask}},
		{"none", gate.Evaluation{Decision: gate.Ask}, []gate.RuleRef{}},
	} {
		got := decidingRules(tt.ev)
		if len(got) != len(tt.want) || got == nil {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
			}
		}
	}
}

func TestLongPollReturnsOnDecision(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, tokenConfig())
	alice, admin := e.client(tokAlice), e.client(tokAdmin)
	call := gate.Call{Tool: "Bash", Input: json.RawMessage(`{"command":"make"}`), IdempotencyKey: "k"}

	type res struct {
		a   *gate.Approval
		err error
	}
	submitted := make(chan res, 1)
	go func() {
		a, err := alice.Submit(ctx, call, time.Minute)
		submitted <- res{a, err}
	}()
	var id string
	eventually(t, "approval pending", func() bool {
		l, _ := e.g.List(ctx, gate.StatusPending)
		if len(l) == 1 {
			id = l[0].ID
		}
		return id != ""
	})
	polled := make(chan res, 1)
	go func() {
		a, err := alice.Get(ctx, id, time.Minute)
		polled <- res{a, err}
	}()
	if _, err := admin.Approve(ctx, id, false, "", "ana"); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []chan res{submitted, polled} {
		r := <-ch
		if r.err != nil || r.a.Status != gate.StatusApproved || r.a.Decision != gate.Allow {
			t.Fatalf("long-poll: %v %+v", r.err, r.a)
		}
	}
	// A wait that passes returns the approval still pending.
	p, err := alice.Submit(ctx, gate.Call{Tool: "Bash", Input: json.RawMessage(`{"command":"x"}`)}, 20*time.Millisecond)
	if err != nil || p.Status != gate.StatusPending {
		t.Fatalf("timed-out wait: %v %+v", err, p)
	}
}

func TestDisconnectLeavesPending(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, tokenConfig())
	alice := e.client(tokAlice)
	call := gate.Call{Tool: "Bash", Input: json.RawMessage(`{"command":"deploy"}`), IdempotencyKey: "tool-use-7"}

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := alice.Submit(cctx, call, time.Minute)
		done <- err
	}()
	eventually(t, "approval pending", func() bool { l, _ := e.g.List(ctx, gate.StatusPending); return len(l) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled submit: %v", err)
	}
	l, _ := e.g.List(ctx, "")
	if len(l) != 1 || l[0].Status != gate.StatusPending {
		t.Fatalf("after disconnect: %+v", l)
	}
	again, err := alice.Submit(ctx, call, 0)
	if err != nil || again.ID != l[0].ID {
		t.Fatalf("re-attach: %v %+v", err, again)
	}
	// Without a key the server derives one from the body: re-posting it re-attaches too.
	noKey := gate.Call{SessionID: "s", Tool: "Bash", Input: json.RawMessage(`{"command":"deploy"}`)}
	k1, _ := alice.Submit(ctx, noKey, 0)
	k2, _ := alice.Submit(ctx, noKey, 0)
	if k1.ID != k2.ID {
		t.Fatalf("derived key: %s != %s", k1.ID, k2.ID)
	}
}

// restartable serves handler on a fixed loopback address that can be
// stopped and started again, like a daemon restart.
type restartable struct {
	t       *testing.T
	addr    string
	handler http.Handler
	srv     *http.Server
}

func newRestartable(t *testing.T, h http.Handler) *restartable {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &restartable{t: t, addr: ln.Addr().String(), handler: h}
	r.serve(ln)
	t.Cleanup(r.stop)
	return r
}

func (r *restartable) serve(ln net.Listener) {
	r.srv = &http.Server{Handler: r.handler}
	go func() { _ = r.srv.Serve(ln) }()
}

func (r *restartable) stop() { _ = r.srv.Close() }

func (r *restartable) start() {
	var ln net.Listener
	eventually(r.t, "re-listen on "+r.addr, func() bool {
		var err error
		ln, err = net.Listen("tcp", r.addr)
		return err == nil
	})
	r.serve(ln)
}

func TestSubmitAndWaitSurvivesRestart(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, tokenConfig()) // the gate and its store outlive the server's "restarts"
	d := newRestartable(t, e.srv)
	alice := NewClient("http://"+d.addr, tokAlice, WithPollWait(time.Minute))

	done := make(chan *gate.Approval, 1)
	errc := make(chan error, 1)
	go func() {
		// The hook's own key (Claude Code's tool_use_id): the stop may
		// land before the client learnt the id, and the re-posted call
		// must find the decided approval. (With a key the gate derives, a
		// call re-posted after the decision is a new call, by design.)
		a, err := alice.SubmitAndWait(ctx, gate.Call{Tool: "Bash", Input: json.RawMessage(`{"command":"make"}`), IdempotencyKey: "toolu_restart"}, time.Second)
		errc <- err
		done <- a
	}()
	var id string
	eventually(t, "approval pending", func() bool {
		l, _ := e.g.List(ctx, gate.StatusPending)
		if len(l) == 1 {
			id = l[0].ID
		}
		return id != ""
	})
	d.stop() // the client's long-poll breaks
	// Decide while the daemon is down; the client learns it after the restart.
	if _, err := e.g.Decide(ctx, id, gate.Decision{Approve: true, By: "ana", Via: "telegram"}); err != nil {
		t.Fatal(err)
	}
	d.start()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if a := <-done; a.ID != id || a.Status != gate.StatusApproved {
		t.Fatalf("after restart: %+v", a)
	}
	if l, _ := e.g.List(ctx, ""); len(l) != 1 {
		t.Fatalf("%d approvals, want 1", len(l))
	}
}

func TestSubmitAndWaitRestartBeforeFirstAnswer(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, openConfig())
	d := newRestartable(t, e.srv)
	c := NewClient("http://"+d.addr, "", WithPollWait(time.Minute))
	call := gate.Call{Agent: "a", Tool: "Bash", Input: json.RawMessage(`{"command":"make"}`), IdempotencyKey: "k"}
	// Decisions made after a restart reach the waiting client; the long-poll
	// in flight breaks mid-request and the client re-attaches by re-posting.
	res := make(chan *gate.Approval, 1)
	go func() {
		a, _ := c.SubmitAndWait(ctx, call, time.Second)
		res <- a
	}()
	eventually(t, "approval pending", func() bool { l, _ := e.g.List(ctx, gate.StatusPending); return len(l) == 1 })
	d.stop()
	d.start()
	l, _ := e.g.List(ctx, gate.StatusPending)
	if _, err := NewClient("http://"+d.addr, tokLocal).Deny(ctx, l[0].ID, "no", false, "ana"); err != nil {
		t.Fatal(err)
	}
	if a := <-res; a == nil || a.Status != gate.StatusDenied || a.Reason != "no" {
		t.Fatalf("got %+v", a)
	}
}

func TestSubmitAndWaitUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := NewClient("http://"+addr, "")
	start := time.Now()
	_, err = c.SubmitAndWait(ctxT(t), gate.Call{Agent: "a", Tool: "Bash"}, 300*time.Millisecond)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("got %v, want ErrUnreachable naming %s", err, addr)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("gave up after %v", time.Since(start))
	}
	// A 4xx is not retried.
	e := newEnv(t, tokenConfig())
	if _, err := NewClient(e.ts.URL, "bad").SubmitAndWait(ctxT(t), gate.Call{Tool: "Bash"}, time.Minute); err == nil || errors.Is(err, ErrUnreachable) {
		t.Fatalf("401: %v", err)
	}
}

func TestEvents(t *testing.T) {
	ctx := ctxT(t)
	cfg := openConfig()
	cfg.Heartbeat = 5 * time.Millisecond
	e := newEnv(t, cfg)
	p1 := e.pending(t, "alice", "k1")
	c := e.client(tokLocal)

	events := make(chan gate.Event, 16)
	errc := make(chan error, 1)
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		errc <- c.Events(cctx, func(ev gate.Event) error { events <- ev; return nil })
	}()
	next := func() gate.Event {
		select {
		case ev := <-events:
			return ev
		case <-ctx.Done():
			t.Fatal("no event")
		}
		return gate.Event{}
	}
	if ev := next(); ev.Type != gate.EventApprovalRequired || ev.Approval.ID != p1.ID {
		t.Fatalf("replay: %+v", ev)
	}
	// The replay came, so the server's subscription is in place.
	p2 := e.pending(t, "bob", "k2")
	if ev := next(); ev.Type != gate.EventApprovalRequired || ev.Approval.ID != p2.ID || string(ev.Approval.Input) != `{"command":"make deploy"}` {
		t.Fatalf("live: %+v", ev)
	}
	if _, err := c.Approve(ctx, p1.ID, false, "", "ana"); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Type != gate.EventApprovalResolved || ev.Approval.ID != p1.ID || ev.Approval.Status != gate.StatusApproved {
		t.Fatalf("resolved: %+v", ev)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("events after cancel: %v", err)
	}
	eventually(t, "unsubscribed", func() bool { return e.subscribers() == 0 })

	// Reconnect: the still pending p2 is replayed; fn's error ends the stream.
	stop := errors.New("stop")
	var got []string
	err := c.Events(ctx, func(ev gate.Event) error { got = append(got, ev.Approval.ID); return stop })
	if !errors.Is(err, stop) || len(got) != 1 || got[0] != p2.ID {
		t.Fatalf("reconnect: %v %v", err, got)
	}
	// The gate dropping the subscription ends the stream with an error to reconnect on.
	go func() {
		eventually(t, "subscribed again", func() bool { return e.subscribers() == 1 })
		e.g.Close()
	}()
	if err := c.Events(ctx, func(gate.Event) error { return nil }); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("dropped stream: %v", err)
	}
}

func TestEventsHeartbeat(t *testing.T) {
	cfg := openConfig()
	cfg.Heartbeat = time.Millisecond
	e := newEnv(t, cfg)
	req, _ := http.NewRequestWithContext(ctxT(t), "GET", e.ts.URL+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+tokLocal)
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	buf := make([]byte, 64)
	var seen strings.Builder
	for !strings.Contains(seen.String(), ": ping\n\n: ping\n\n") {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatalf("read: %v (got %q)", err, seen.String())
		}
		seen.Write(buf[:n])
	}
}

func TestReadSSE(t *testing.T) {
	stream := ": hello\n\nevent: approval_required\ndata: {\"id\":\"a1\",\"status\":\"pending\",\"input\":{\"x\":1}}\n\n" +
		"event: approval_resolved\ndata: {\"id\":\"a1\",\ndata: \"status\":\"approved\"}\n\n"
	var got []gate.Event
	err := readSSE(strings.NewReader(stream), func(ev gate.Event) error { got = append(got, ev); return nil })
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("end of stream: %v", err)
	}
	if len(got) != 2 || got[0].Approval.ID != "a1" || string(got[0].Approval.Input) != `{"x":1}` ||
		got[1].Type != gate.EventApprovalResolved || got[1].Approval.Status != gate.StatusApproved {
		t.Fatalf("events: %+v", got)
	}
	if err := readSSE(strings.NewReader("data: {nope\n\n"), func(gate.Event) error { return nil }); err == nil || errors.Is(err, ErrUnreachable) {
		t.Fatalf("bad data: %v", err)
	}
}

func FuzzReadSSE(f *testing.F) {
	f.Add("event: approval_required\ndata: {\"id\":\"a\"}\n\n")
	f.Add(": ping\n\ndata: null\n\n")
	f.Add("data: {\"approval\":1}\r\n\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		_ = readSSE(strings.NewReader(s), func(ev gate.Event) error {
			if ev.Type == "" {
				t.Fatal("event without type")
			}
			return nil
		})
	})
}

// FuzzSubmitBody posts arbitrary bodies to /v1/calls of the real gate
// (envRules): never a 5xx or a body that is not JSON, and nothing allowed
// that the rules do not allow.
func FuzzSubmitBody(f *testing.F) {
	f.Add(`{"agent":"a","tool":"Bash","input":{"command":"ls"}}`)
	f.Add(`{"agent":"a","tool":"Read","input":{"file_path":"x"}}`)
	f.Add(`{"agent":"a","tool":"Bash","input":[1]} `)
	f.Add(`{"tool":"Bash","input":null,"idempotency_key":"k"}`)
	f.Add(`{"agent":"a","tool":"OkTool","input":{"x":[1,{"y":"z"}]},"cwd":"/src","session_id":"s"}`)
	f.Add(`{"agent":"a","tool":"Read","input":{"file_path":"/src/../etc/shadow"},"cwd":"/src"}`)
	f.Fuzz(func(t *testing.T, body string) {
		e := newEnv(t, Config{Open: true, MaxBody: 1 << 12})
		r := e.call(t, "POST", "/v1/calls", "", body)
		if r.status >= 500 || r.body == nil {
			t.Fatalf("%q: %d %s", body, r.status, r.raw)
		}
		// envRules allow Read and OkTool only; the gate allows nothing else.
		if tool := r.body["tool"]; r.status == 200 && r.body["status"] == "allowed" && tool != "Read" && tool != "OkTool" {
			t.Fatalf("%q allowed", body)
		}
	})
}

func TestNoGoroutineLeak(t *testing.T) {
	t.Run("memstore", func(t *testing.T) {
		e := newEnv(t, Config{Open: true})
		checkNoLeak(t, e.srv, e.subscribers)
	})
	t.Run("bbolt", func(t *testing.T) {
		g, closeGate := realGate(t, t.TempDir())
		t.Cleanup(closeGate)
		checkNoLeak(t, NewServer(Config{Open: true}, g, nil), func() int { return 0 })
	})
}

// checkNoLeak runs many long-polls that time out and many whose clients go
// away, then checks that the goroutine count settles back.
func checkNoLeak(t *testing.T, h http.Handler, subscribers func() int) {
	ctx := ctxT(t)
	ts := httptest.NewServer(h)
	defer ts.Close()
	c := NewClient(ts.URL, "")
	// Create the approvals first, so the count below does not include
	// goroutines the gate keeps per pending approval (timers).
	var ids []string
	for i := range 20 {
		a, err := c.Submit(ctx, gate.Call{Agent: "a", Tool: "Bash", Input: json.RawMessage(fmt.Sprintf(`{"command":"x%d"}`, i))}, 0)
		if err != nil || a.Status != gate.StatusPending {
			t.Fatalf("submit: %v %+v", err, a)
		}
		ids = append(ids, a.ID)
	}
	c.hc.CloseIdleConnections()
	ts.CloseClientConnections()
	base := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(2)
		id := ids[i%len(ids)]
		go func() { // waits that time out
			defer wg.Done()
			if a, err := c.Get(ctx, id, 5*time.Millisecond); err != nil || a.Status != gate.StatusPending {
				t.Errorf("timed-out wait: %v", err)
			}
		}()
		go func() { // clients that go away
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
			defer cancel()
			_, _ = c.Get(cctx, id, time.Minute)
		}()
	}
	wg.Wait()
	c.hc.CloseIdleConnections()
	ts.CloseClientConnections()
	eventually(t, "goroutines to settle", func() bool { return runtime.NumGoroutine() <= base+2 })
	if n := subscribers(); n != 0 {
		t.Fatalf("%d subscribers left", n)
	}
	for _, id := range ids {
		if a, err := c.Get(ctx, id, 0); err != nil || a.Status != gate.StatusPending {
			t.Fatalf("approval %s after disconnects: %v %+v", id, err, a)
		}
	}
}

func TestMetrics(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, Config{Open: true})
	cctx, cancel := context.WithCancel(ctx)
	consumed := make(chan struct{})
	go func() { e.srv.Metrics().Consume(cctx, e.svc); close(consumed) }()
	defer func() { cancel(); <-consumed }()
	eventually(t, "metrics subscribed", func() bool { return e.subscribers() == 1 })

	c := e.client("")
	if a, err := c.Submit(ctx, gate.Call{Agent: "a", Tool: "Read", Input: json.RawMessage(`{"file_path":"/src/a.go"}`)}, 0); err != nil || a.Status != gate.StatusAllowed {
		t.Fatalf("allowed call: %v %+v", err, a)
	}
	p1 := e.pending(t, "a", "k1")
	e.pending(t, "a", "k2")
	// Decided "in Telegram": straight on the gate, not through the API.
	if _, err := e.g.Decide(ctx, p1.ID, gate.Decision{Approve: true, By: "ana", Via: "telegram"}); err != nil {
		t.Fatal(err)
	}
	e.srv.Metrics().SendError("telegram")
	e.srv.Metrics().SendRetry("slack")
	want := []string{
		`approvalbot_calls_total{decision="allow",status="allowed"} 1`,
		`approvalbot_calls_total{decision="allow",status="approved"} 1`,
		`approvalbot_approvals_pending 1`,
		`approvalbot_time_to_decision_seconds_count{status="approved"} 1`,
		`approvalbot_http_requests_total{code="200",route="POST /v1/calls"} 1`,
		`approvalbot_frontend_send_errors_total{frontend="telegram"} 1`,
		`approvalbot_frontend_send_retries_total{frontend="slack"} 1`,
		`go_goroutines`,
	}
	var text string
	eventually(t, "metrics", func() bool {
		resp, err := http.Get(e.ts.URL + "/metrics")
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		text = string(b)
		for _, w := range want {
			if !strings.Contains(text, w) {
				return false
			}
		}
		return true
	})
}

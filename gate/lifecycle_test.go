package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"approvalbot/gate"
	"approvalbot/store"
)

// testPolicy decides by tool name: OkTool allow, BadTool deny, anything else ask.
func testPolicy(t testing.TB) *gate.Policy {
	t.Helper()
	p, err := gate.Compile(gate.PolicySpec{File: "test.jsonc", Rules: []gate.RuleSpec{
		{Tool: "*", Pattern: "*", Action: gate.Ask, File: "test.jsonc", Line: 1},
		{Tool: "OkTool", Pattern: "*", Action: gate.Allow, File: "test.jsonc", Line: 2},
		{Tool: "BadTool", Pattern: "*", Action: gate.Deny, File: "test.jsonc", Line: 3},
	}})
	if err != nil {
		t.Fatalf("compile policy: %v", err)
	}
	return p
}

type harness struct {
	t     testing.TB
	dir   string
	st    *store.Store
	g     *gate.Gate
	cfg   gate.Config
	notes *recorder
}

func newHarness(t testing.TB, cfg gate.Config) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), cfg: cfg}
	h.open()
	t.Cleanup(h.close)
	return h
}

func (h *harness) open() {
	h.t.Helper()
	st, err := store.Open(filepath.Join(h.dir, "approvalbot.db"), store.Options{})
	if err != nil {
		h.t.Fatalf("open store: %v", err)
	}
	h.st = st
	h.notes = newRecorder()
	h.g = gate.New(h.cfg, testPolicy(h.t), st, nil)
	h.g.AddNotifier(h.notes)
	if err := h.g.Start(context.Background()); err != nil {
		h.t.Fatalf("start gate: %v", err)
	}
}

func (h *harness) close() {
	if h.g != nil {
		h.g.Close()
		h.st.Close()
		h.g = nil
	}
}

// restart closes and reopens gate and store on the same file.
func (h *harness) restart() {
	h.close()
	h.open()
}

func call(tool, input string) gate.Call {
	return gate.Call{Agent: "claude", SessionID: "s1", Tool: tool, Input: json.RawMessage(input), Cwd: "/p"}
}

func (h *harness) submit(c gate.Call) *gate.Approval {
	h.t.Helper()
	a, err := h.g.Submit(context.Background(), c)
	if err != nil {
		h.t.Fatalf("submit %+v: %v", c, err)
	}
	return a
}

// recorder is a Notifier that records what it was told: notified holds
// every prompt shown or refreshed, resolved every outcome.
type recorder struct {
	mu       sync.Mutex
	notified []gate.View
	resolved []gate.View
	changed  chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1000)} }

func (r *recorder) Name() string { return "rec" }
func (r *recorder) Show(_ context.Context, v gate.View) (gate.MessageRef, error) {
	r.record(v)
	return gate.MessageRef{ChatID: "c", MessageID: v.Approval.ID}, nil
}
func (r *recorder) Update(_ context.Context, _ gate.MessageRef, v gate.View) error {
	r.record(v)
	return nil
}
func (r *recorder) record(v gate.View) {
	r.mu.Lock()
	if v.Approval.Status.Final() {
		r.resolved = append(r.resolved, v)
	} else {
		r.notified = append(r.notified, v)
	}
	r.mu.Unlock()
	r.changed <- struct{}{}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestSubmitAtOnce(t *testing.T) {
	h := newHarness(t, gate.Config{})
	tests := []struct {
		tool     string
		status   gate.Status
		decision gate.Action
	}{
		{"OkTool", gate.StatusAllowed, gate.Allow},
		{"BadTool", gate.StatusDenied, gate.Deny},
	}
	for _, tt := range tests {
		a := h.submit(call(tt.tool, `{}`))
		if a.Status != tt.status || a.Decision != tt.decision || a.ID == "" {
			t.Errorf("%s: got status %s decision %s id %q", tt.tool, a.Status, a.Decision, a.ID)
		}
		// At-once answers are not approvals.
		if _, err := h.g.Get(context.Background(), a.ID); !errors.Is(err, gate.ErrNotFound) {
			t.Errorf("%s: Get = %v, want ErrNotFound", tt.tool, err)
		}
	}
	if as, _ := h.g.List(context.Background(), ""); len(as) != 0 {
		t.Errorf("at-once answers were stored as approvals: %d", len(as))
	}
}

func TestPendingThenApprove(t *testing.T) {
	h := newHarness(t, gate.Config{})
	ctx := context.Background()
	a := h.submit(call("AskTool", `{"x":1}`))
	if a.Status != gate.StatusPending || a.Decision != "" {
		t.Fatalf("status %s decision %q, want pending", a.Status, a.Decision)
	}
	// Durable before anyone heard of it: the store already has it.
	if got, err := h.st.GetApproval(ctx, a.ID); err != nil || got.Status != gate.StatusPending {
		t.Fatalf("store has %v, %v", got, err)
	}
	waitFor(t, "notify", func() bool { h.notes.mu.Lock(); defer h.notes.mu.Unlock(); return len(h.notes.notified) == 1 })

	done := make(chan *gate.Approval)
	go func() {
		got, err := h.g.Wait(ctx, a.ID)
		if err != nil {
			t.Errorf("wait: %v", err)
		}
		done <- got
	}()
	d, err := h.g.Decide(ctx, a.ID, gate.Decision{Approve: true, By: "ana", Via: "test", Digest: a.Digest[:12]})
	if err != nil {
		t.Fatalf("decide: %v", err)
	}
	got := <-done
	if got.Status != gate.StatusApproved || got.Decision != gate.Allow || got.DecidedBy != "ana" || got.Via != "test" {
		t.Errorf("waiter got %+v", got)
	}
	if d.DecidedAt == nil {
		t.Error("DecidedAt not set")
	}
	// A second decision is refused and shows who decided.
	again, err := h.g.Decide(ctx, a.ID, gate.Decision{Approve: false, By: "bob"})
	if !errors.Is(err, gate.ErrAlreadyDecided) || again == nil || again.DecidedBy != "ana" {
		t.Errorf("second decide = %+v, %v; want ErrAlreadyDecided showing ana", again, err)
	}
	waitFor(t, "resolved", func() bool { h.notes.mu.Lock(); defer h.notes.mu.Unlock(); return len(h.notes.resolved) == 1 })
}

func TestDecideErrors(t *testing.T) {
	h := newHarness(t, gate.Config{})
	ctx := context.Background()
	a := h.submit(call("AskTool", `{"x":2}`))
	tests := []struct {
		name string
		id   string
		d    gate.Decision
		want error
	}{
		{"unknown id", "nope", gate.Decision{Approve: true}, gate.ErrNotFound},
		{"empty id", "", gate.Decision{Approve: true}, gate.ErrInvalid},
		{"digest mismatch", a.ID, gate.Decision{Approve: true, Digest: "00000000"}, gate.ErrDigestMismatch},
		{"short digest", a.ID, gate.Decision{Approve: true, Digest: "ab"}, gate.ErrInvalid},
		{"always without approve", a.ID, gate.Decision{Always: true}, gate.ErrInvalid},
		{"stop with approve", a.ID, gate.Decision{Approve: true, Stop: true}, gate.ErrInvalid},
		{"bad scope", a.ID, gate.Decision{Approve: true, Always: true, Scope: "forever"}, gate.ErrInvalid},
	}
	for _, tt := range tests {
		if _, err := h.g.Decide(ctx, tt.id, tt.d); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	// Nothing above changed the approval.
	got, _ := h.g.Get(ctx, a.ID)
	if got.Status != gate.StatusPending {
		t.Errorf("status after bad decisions = %s", got.Status)
	}
}

func TestInvalidCalls(t *testing.T) {
	h := newHarness(t, gate.Config{})
	bad := []gate.Call{
		{Agent: "a", Tool: ""},
		{Agent: "a", Tool: "X", Input: json.RawMessage(`[1,2]`)},
		{Agent: "a", Tool: "X", Input: json.RawMessage(`{"a":`)},
		{Agent: string(make([]byte, 500)), Tool: "X"},
	}
	for i, c := range bad {
		if _, err := h.g.Submit(context.Background(), c); !errors.Is(err, gate.ErrInvalid) {
			t.Errorf("call %d: err = %v, want ErrInvalid", i, err)
		}
	}
	if as, _ := h.g.List(context.Background(), ""); len(as) != 0 {
		t.Errorf("bad calls stored %d approvals", len(as))
	}
}

func TestDenyOutcomesAndMemory(t *testing.T) {
	h := newHarness(t, gate.Config{DenyMemory: time.Hour})
	ctx := context.Background()
	a := h.submit(call("AskTool", `{"cmd":"x"}`))
	d, err := h.g.Decide(ctx, a.ID, gate.Decision{Reason: "not now", By: "ana", Via: "test"})
	if err != nil || d.Status != gate.StatusDenied || d.Reason != "not now" || d.Decision != gate.Deny {
		t.Fatalf("deny = %+v, %v", d, err)
	}
	// Same call again (another tool_use_id): denied at once with the reason.
	c := call("AskTool", `{ "cmd" : "x" }`) // same input spelled differently
	c.IdempotencyKey = "tool-use-2"
	again := h.submit(c)
	if again.Status != gate.StatusDenied || again.DecidedBy != "ana" || again.Reason != "denied earlier by ana: not now" {
		t.Errorf("retry = status %s by %q reason %q", again.Status, again.DecidedBy, again.Reason)
	}
	// Another input is not remembered.
	if other := h.submit(call("AskTool", `{"cmd":"y"}`)); other.Status != gate.StatusPending {
		t.Errorf("other input = %s, want pending", other.Status)
	}
	// Stop.
	s := h.submit(call("AskTool", `{"cmd":"z"}`))
	if got, err := h.g.Decide(ctx, s.ID, gate.Decision{Stop: true, By: "ana"}); err != nil || got.Status != gate.StatusDeniedStop {
		t.Errorf("stop = %+v, %v", got, err)
	}
}

func TestDenyMemoryExpires(t *testing.T) {
	var now atomic.Pointer[time.Time]
	start := time.Now()
	now.Store(&start)
	h := newHarness(t, gate.Config{DenyMemory: time.Minute, Now: func() time.Time { return *now.Load() }})
	ctx := context.Background()
	a := h.submit(call("AskTool", `{"k":1}`))
	if _, err := h.g.Decide(ctx, a.ID, gate.Decision{By: "ana"}); err != nil {
		t.Fatal(err)
	}
	later := start.Add(2 * time.Minute)
	now.Store(&later)
	c := call("AskTool", `{"k":1}`)
	c.IdempotencyKey = "fresh"
	if got := h.submit(c); got.Status != gate.StatusPending {
		t.Errorf("after the memory window: %s, want pending", got.Status)
	}
}

func TestIdempotency(t *testing.T) {
	h := newHarness(t, gate.Config{})
	ctx := context.Background()

	// Explicit key: concurrent submits make one approval.
	c := call("AskTool", `{"n":1}`)
	c.IdempotencyKey = "toolu_1"
	ids := make(chan string, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := h.g.Submit(ctx, c)
			if err != nil {
				t.Error(err)
				return
			}
			ids <- a.ID
		}()
	}
	wg.Wait()
	close(ids)
	first := ""
	for id := range ids {
		if first == "" {
			first = id
		} else if id != first {
			t.Fatalf("two approvals for one key: %s and %s", first, id)
		}
	}
	// Decided: an explicit key still returns the decided approval.
	if _, err := h.g.Decide(ctx, first, gate.Decision{Approve: true, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if a := h.submit(c); a.ID != first || a.Status != gate.StatusApproved {
		t.Errorf("re-post after decision = %s %s, want %s approved", a.ID, a.Status, first)
	}

	// Derived key: a re-post while pending attaches.
	d1 := h.submit(call("AskTool", `{"n":2}`))
	d2 := h.submit(call("AskTool", `{"n":2}`))
	if d1.ID != d2.ID {
		t.Errorf("derived key made two approvals: %s %s", d1.ID, d2.ID)
	}
	// Other session: another approval.
	o := call("AskTool", `{"n":2}`)
	o.SessionID = "s2"
	if d3 := h.submit(o); d3.ID == d1.ID {
		t.Error("another session attached to the same approval")
	}
	if as, _ := h.g.List(ctx, gate.StatusPending); len(as) != 2 {
		t.Errorf("pending = %d, want 2", len(as))
	}
}

// TestConcurrentOutcomes races approve, deny, cancel and expiry on one
// approval: exactly one outcome wins and everyone sees it.
func TestConcurrentOutcomes(t *testing.T) {
	h := newHarness(t, gate.Config{Timeout: 30 * time.Millisecond})
	ctx := context.Background()
	for i := range 30 {
		a := h.submit(call("AskTool", fmt.Sprintf(`{"i":%d}`, i)))
		var wins atomic.Int32
		var wg sync.WaitGroup
		try := func(f func() (*gate.Approval, error)) {
			defer wg.Done()
			_, err := f()
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, gate.ErrAlreadyDecided):
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}
		wg.Add(3)
		go try(func() (*gate.Approval, error) {
			return h.g.Decide(ctx, a.ID, gate.Decision{Approve: true, By: "a"})
		})
		go try(func() (*gate.Approval, error) { return h.g.Decide(ctx, a.ID, gate.Decision{By: "b"}) })
		go try(func() (*gate.Approval, error) { return h.g.Cancel(ctx, a.ID, "") })
		wg.Wait()
		final, err := h.g.Wait(ctx, a.ID)
		if err != nil || !final.Status.Final() {
			t.Fatalf("wait: %+v %v", final, err)
		}
		// The expiry timer may have won instead of the three.
		if n := wins.Load(); n > 1 || (n == 0 && final.Status != gate.StatusExpired) {
			t.Fatalf("round %d: %d winners, final %s", i, n, final.Status)
		}
	}
}

func TestExpiry(t *testing.T) {
	h := newHarness(t, gate.Config{Timeout: 20 * time.Millisecond})
	a := h.submit(call("AskTool", `{}`))
	got, err := h.g.Wait(context.Background(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != gate.StatusExpired || got.Decision != gate.Deny || got.Via != "timeout" {
		t.Errorf("got %s %s via %s", got.Status, got.Decision, got.Via)
	}
}

func TestAlwaysCascade(t *testing.T) {
	h := newHarness(t, gate.Config{})
	ctx := context.Background()
	a1 := h.submit(call("AskTool", `{"a":1}`))
	a2 := h.submit(call("AskTool", `{"a":2}`))
	other := call("AskTool", `{"a":3}`)
	other.Agent = "codex"
	a3 := h.submit(other)
	diff := h.submit(call("OtherTool", `{}`))

	if len(a1.Evaluation.AlwaysRules) == 0 {
		t.Fatalf("no always pattern for a name-only tool: %+v", a1.Evaluation)
	}
	got, err := h.g.Decide(ctx, a1.ID, gate.Decision{Approve: true, Always: true, By: "ana"})
	if err != nil || got.Status != gate.StatusApprovedAlways {
		t.Fatalf("always = %+v, %v", got, err)
	}
	if b, _ := h.g.Get(ctx, a2.ID); b.Status != gate.StatusApproved || b.Via != "always-rule" {
		t.Errorf("same agent+tool pending = %s via %s, want approved by cascade", b.Status, b.Via)
	}
	for _, id := range []string{a3.ID, diff.ID} {
		if b, _ := h.g.Get(ctx, id); b.Status != gate.StatusPending {
			t.Errorf("%s = %s, want still pending", id, b.Status)
		}
	}
	rules, _ := h.g.Rules(ctx, "claude")
	if len(rules) != 1 || rules[0].Tool != "AskTool" || rules[0].ApprovalID != a1.ID {
		t.Fatalf("rules = %+v", rules)
	}
	// New calls of that tool now allow at once; after removal they ask again.
	if n := h.submit(call("AskTool", `{"a":9}`)); n.Status != gate.StatusAllowed {
		t.Errorf("after always: %s", n.Status)
	}
	if _, err := h.g.RemoveRule(ctx, rules[0].ID, "ana"); err != nil {
		t.Fatal(err)
	}
	if n := h.submit(call("AskTool", `{"a":10}`)); n.Status != gate.StatusPending {
		t.Errorf("after revoke: %s", n.Status)
	}
	// Always can never override a static deny.
	if _, err := h.g.AddRule(ctx, gate.AlwaysRule{Agent: "claude", Tool: "BadTool", Pattern: "*"}); err != nil {
		t.Fatal(err)
	}
	if n := h.submit(call("BadTool", `{}`)); n.Status != gate.StatusDenied {
		t.Errorf("always over static deny: %s", n.Status)
	}
}

func TestSessionScopedAlways(t *testing.T) {
	h := newHarness(t, gate.Config{})
	ctx := context.Background()
	a := h.submit(call("AskTool", `{"s":1}`))
	if _, err := h.g.Decide(ctx, a.ID, gate.Decision{Approve: true, Always: true, Scope: gate.ScopeSession, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if n := h.submit(call("AskTool", `{"s":2}`)); n.Status != gate.StatusAllowed {
		t.Errorf("same session: %s", n.Status)
	}
	c := call("AskTool", `{"s":3}`)
	c.SessionID = "s2"
	if n := h.submit(c); n.Status != gate.StatusPending {
		t.Errorf("other session: %s", n.Status)
	}
}

func TestModes(t *testing.T) {
	h := newHarness(t, gate.Config{})
	ctx := context.Background()
	p := h.submit(call("AskTool", `{"m":1}`))
	if err := h.g.SetMode(ctx, "claude", gate.ModeStrict, "ana"); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.g.Get(ctx, p.ID); got.Status != gate.StatusDenied {
		t.Errorf("pending under strict = %s, want denied", got.Status)
	}
	if n := h.submit(call("AskTool", `{"m":2}`)); n.Status != gate.StatusDenied {
		t.Errorf("strict: %s", n.Status)
	}
	if err := h.g.SetMode(ctx, "claude", gate.ModeApproveAll, "ana"); err != nil {
		t.Fatal(err)
	}
	if n := h.submit(call("AskTool", `{"m":3}`)); n.Status != gate.StatusAllowed {
		t.Errorf("approve_all: %s", n.Status)
	}
	if n := h.submit(call("BadTool", `{}`)); n.Status != gate.StatusDenied {
		t.Errorf("approve_all over deny: %s", n.Status)
	}
	if err := h.g.SetMode(ctx, "claude", "yolo", "ana"); !errors.Is(err, gate.ErrInvalid) {
		t.Errorf("bad mode: %v", err)
	}
	// Modes persist.
	h.restart()
	if m, _ := h.g.Mode(ctx, "claude"); m != gate.ModeApproveAll {
		t.Errorf("mode after restart = %s", m)
	}
}

func TestRestart(t *testing.T) {
	h := newHarness(t, gate.Config{Timeout: time.Hour})
	ctx := context.Background()
	var ids []string
	for i := range 5 {
		ids = append(ids, h.submit(call("AskTool", fmt.Sprintf(`{"r":%d}`, i))).ID)
	}
	h.restart()
	pending, err := h.g.List(ctx, gate.StatusPending)
	if err != nil || len(pending) != 5 {
		t.Fatalf("pending after restart = %d, %v", len(pending), err)
	}
	waitFor(t, "re-notify", func() bool { h.notes.mu.Lock(); defer h.notes.mu.Unlock(); return len(h.notes.notified) == 5 })
	h.notes.mu.Lock()
	for _, v := range h.notes.notified {
		if v.Restarted.IsZero() {
			t.Errorf("re-notified %s without the restart", v.Approval.ID)
		}
	}
	h.notes.mu.Unlock()
	// Old ids keep working; the same call re-attaches.
	if _, err := h.g.Decide(ctx, ids[0], gate.Decision{Approve: true, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if a := h.submit(call("AskTool", `{"r":1}`)); a.ID != ids[1] {
		t.Errorf("re-attach after restart: %s, want %s", a.ID, ids[1])
	}
	if h2 := h.g.Health(ctx); h2.Pending != 4 {
		t.Errorf("health pending = %d", h2.Pending)
	}
}

func TestRestartExpiresOverdue(t *testing.T) {
	var now atomic.Pointer[time.Time]
	start := time.Now()
	now.Store(&start)
	h := newHarness(t, gate.Config{Timeout: time.Hour, Now: func() time.Time { return *now.Load() }})
	a := h.submit(call("AskTool", `{}`))
	// Shown before the restart, so there is a message to show the expiry on.
	waitFor(t, "notify", func() bool { h.notes.mu.Lock(); defer h.notes.mu.Unlock(); return len(h.notes.notified) == 1 })
	later := start.Add(2 * time.Hour)
	now.Store(&later)
	h.restart()
	got, err := h.g.Get(context.Background(), a.ID)
	if err != nil || got.Status != gate.StatusExpired {
		t.Fatalf("after restart past deadline: %+v %v", got, err)
	}
	waitFor(t, "resolved notice", func() bool { h.notes.mu.Lock(); defer h.notes.mu.Unlock(); return len(h.notes.resolved) == 1 })
}

func TestSubscribeReplayAndLive(t *testing.T) {
	h := newHarness(t, gate.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	old := h.submit(call("AskTool", `{"e":1}`))
	events := h.g.Subscribe(ctx)
	e := <-events
	if e.Type != gate.EventApprovalRequired || e.Approval.ID != old.ID {
		t.Fatalf("replay = %+v", e)
	}
	n := h.submit(call("AskTool", `{"e":2}`))
	if e := <-events; e.Type != gate.EventApprovalRequired || e.Approval.ID != n.ID {
		t.Fatalf("live = %+v", e)
	}
	if _, err := h.g.Decide(ctx, n.ID, gate.Decision{Approve: true, By: "x"}); err != nil {
		t.Fatal(err)
	}
	if e := <-events; e.Type != gate.EventApprovalResolved || e.Approval.ID != n.ID || e.Approval.Status != gate.StatusApproved {
		t.Fatalf("resolved = %+v", e)
	}
	cancel()
	for range events {
	}
}

func TestAuditChain(t *testing.T) {
	h := newHarness(t, gate.Config{})
	ctx := context.Background()
	h.submit(call("OkTool", `{}`))
	a := h.submit(call("AskTool", `{}`))
	h.g.Decide(ctx, a.ID, gate.Decision{Approve: true, By: "ana"})
	h.restart() // Close waits for background audit writes.
	n, err := h.g.VerifyAudit(ctx)
	if err != nil || n < 3 {
		t.Fatalf("verify = %d, %v", n, err)
	}
	es, _ := h.g.Audit(ctx, 0, 0)
	events := map[string]bool{}
	for _, e := range es {
		events[e.Event] = true
	}
	for _, want := range []string{"evaluated", "pending", "decided"} {
		if !events[want] {
			t.Errorf("no %q audit entry in %+v", want, es)
		}
	}
}

// TestNoGoroutineLeak: waits that time out or are cancelled leave nothing behind.
func TestNoGoroutineLeak(t *testing.T) {
	h := newHarness(t, gate.Config{})
	base := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for i := range 200 {
		a := h.submit(call("AskTool", fmt.Sprintf(`{"l":%d}`, i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer cancel()
			if got, err := h.g.Wait(ctx, a.ID); err != nil || got.Status != gate.StatusPending {
				t.Errorf("wait = %v %v", got, err)
			}
		}()
		sub, cancel := context.WithCancel(context.Background())
		ch := h.g.Subscribe(sub)
		cancel()
		for range ch {
		}
	}
	wg.Wait()
	waitFor(t, "goroutines to settle", func() bool { return runtime.NumGoroutine() <= base+2 })
}

// TestChangesAuditedWithActor: every change records who made it.
func TestChangesAuditedWithActor(t *testing.T) {
	h := newHarness(t, gate.Config{})
	ctx := context.Background()
	a := h.submit(call("AskTool", `{"who":1}`))
	var ruleID string
	steps := []struct {
		event string
		do    func() error
	}{
		{"decided", func() error {
			_, err := h.g.Decide(ctx, a.ID, gate.Decision{Approve: true, By: "ana (alice@box)", Via: "api"})
			return err
		}},
		{"rule_added", func() error {
			r, err := h.g.AddRule(ctx, gate.AlwaysRule{Agent: "claude", Tool: "AskTool", Pattern: "*", CreatedBy: "ana"})
			ruleID = r.ID
			return err
		}},
		{"rule_removed", func() error { _, err := h.g.RemoveRule(ctx, ruleID, "ana"); return err }},
		{"mode", func() error { return h.g.SetMode(ctx, "claude", gate.ModeStrict, "ana") }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.event, err)
		}
		entries, err := h.g.Audit(ctx, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		last := entries[len(entries)-1]
		if last.Event != st.event || !strings.HasPrefix(last.By, "ana") {
			t.Errorf("last audit entry %+v, want %s by ana", last, st.event)
		}
	}
}

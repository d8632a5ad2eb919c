package slack

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"approvalbot/bots/outbox"
	"approvalbot/bots/slacktest"
	"approvalbot/gate"
)

const (
	chanID     = "C0APPROVE"
	approverID = "UAPPROVER"
	strangerID = "USTRANGER"
	secret     = "8f742231b10e8888abcd99yyyzzz85a5"
)

var t0 = time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)

func testApproval(id string) *gate.Approval {
	return &gate.Approval{ID: id, Status: gate.StatusPending, Agent: "claude", SessionID: "s1", Tool: "Bash",
		Input: []byte(`{"command":"rm -rf build"}`), Cwd: "/p", Digest: "0123456789abcdef0123456789abcdef",
		Judged: &gate.Judged{Kind: gate.KindShell, Command: "rm -rf build"},
		Evaluation: gate.Evaluation{Decision: gate.Ask, Kind: gate.KindShell, Reason: "rm needs a person",
			Always: []string{"rm -rf build"}, AlwaysRules: []gate.AlwaysPattern{{Tool: "Bash", Pattern: "rm -rf build"}}},
		CreatedAt: t0, Deadline: t0.Add(10 * time.Minute)}
}

// setCommand makes a a shell call of cmd, judged as the gate would.
func setCommand(a *gate.Approval, cmd string) {
	a.Input, _ = json.Marshal(map[string]string{"command": cmd})
	a.Judged = &gate.Judged{Kind: gate.KindShell, Command: cmd}
}

type env struct {
	t   *testing.T
	ctx context.Context
	fs  *slacktest.Server
	fg  *fakeGate
	bot *Bot
}

func testConfig(fs *slacktest.Server, socket bool) Config {
	cfg := Config{BotToken: "xoxb-test", Channel: chanID, Approvers: []string{approverID},
		SigningSecret: secret, APIURL: fs.APIURL(),
		Limits: outbox.Limits{PerDest: time.Millisecond, BackoffMin: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond},
		Now:    func() time.Time { return t0.Add(time.Minute) }}
	if socket {
		cfg.AppToken = "xapp-test"
	}
	return cfg
}

// start runs a bot against a fake Slack; with socket, over Socket Mode.
func start(t *testing.T, socket bool, as ...*gate.Approval) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	e := &env{t: t, ctx: ctx, fs: slacktest.New(t), fg: newFakeGate(as...)}
	bot, err := New(testConfig(e.fs, socket), e.fg, nil)
	if err != nil {
		t.Fatalf("new bot: %v", err)
	}
	e.bot = bot
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- bot.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		bot.Close()
		cancel()
	})
	if socket {
		if err := e.fs.AwaitConnections(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func press(user, action, value string) map[string]any {
	return map[string]any{
		"type": "block_actions", "trigger_id": "1337.42.abcd",
		"user":      map[string]any{"id": user},
		"channel":   map[string]any{"id": chanID},
		"container": map[string]any{"type": "message", "channel_id": chanID, "message_ts": "1700000000.000001"},
		"actions":   []any{map[string]any{"type": "button", "action_id": action, "block_id": actionsBlockID, "value": value}},
	}
}

func reasonSubmission(user, meta, reason string) map[string]any {
	return map[string]any{
		"type": "view_submission",
		"user": map[string]any{"id": user},
		"view": map[string]any{"callback_id": reasonCallbackID, "private_metadata": meta,
			"state": map[string]any{"values": map[string]any{reasonBlockID: map[string]any{
				reasonActionID: map[string]any{"type": "plain_text_input", "value": reason}}}}},
	}
}

// interact sends payload over the socket and returns the ack's payload.
func (e *env) interact(payload any) json.RawMessage {
	e.t.Helper()
	id, err := e.fs.SendInteractive(payload)
	if err != nil {
		e.t.Fatal(err)
	}
	ack, err := e.fs.AwaitAck(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return ack
}

func (e *env) notify(a *gate.Approval) slacktest.Message {
	e.t.Helper()
	if err := e.bot.Notify(e.ctx, a); err != nil {
		e.t.Fatalf("notify: %v", err)
	}
	msgs := e.fs.Snapshot().Messages
	if len(msgs) == 0 {
		e.t.Fatal("nothing posted")
	}
	return msgs[0]
}

func (e *env) await(what string, cond func(slacktest.Snapshot) bool) slacktest.Snapshot {
	e.t.Helper()
	if err := e.fs.Await(e.ctx, cond); err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
	return e.fs.Snapshot()
}

func (e *env) awaitDecisions(n int) []gate.Decision {
	e.t.Helper()
	for {
		if d := e.fg.decided(); len(d) >= n {
			return d
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("waited for %d decisions, have %d", n, len(e.fg.decided()))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestPostPressUpdate(t *testing.T) {
	a := testApproval("A1")
	e := start(t, true, a)
	m := e.notify(a)
	if m.Channel != chanID || !strings.Contains(m.Blocks, `"action_id":"approve"`) || !strings.Contains(m.Blocks, "rm -rf build") {
		t.Fatalf("posted message lacks the prompt: %+v", m)
	}
	for _, want := range []string{`"action_id":"always"`, `"action_id":"deny"`, `"action_id":"deny_reason"`, `"action_id":"stop"`, `"confirm"`, "Always allow?"} {
		if !strings.Contains(m.Blocks, want) {
			t.Errorf("blocks lack %s", want)
		}
	}
	got, _ := e.fg.Get(e.ctx, "A1")
	if r := ref(got); r == nil || r.MessageID != m.TS || r.ChatID != chanID {
		t.Fatalf("message ref not recorded: %+v", got.Messages)
	}

	if ack := e.interact(press(approverID, actAlways, buttonValue(a))); string(ack) != "null" {
		t.Errorf("ack payload = %s, want empty", ack)
	}
	d := e.awaitDecisions(1)[0]
	if !d.Approve || !d.Always || d.By != "<@"+approverID+">" || d.Via != "slack" || d.Digest != a.Digest[:digestPrefixLen] {
		t.Fatalf("decision = %+v", d)
	}
	// The gate calls Resolved after every decision.
	final, _ := e.fg.Get(e.ctx, "A1")
	if err := e.bot.Resolved(e.ctx, final); err != nil {
		t.Fatalf("resolved: %v", err)
	}
	m = e.fs.Snapshot().Messages[0]
	if m.Updates != 1 || strings.Contains(m.Blocks, `"action_id"`) || !strings.Contains(blockTexts(t, m.Blocks), "Approved always by <@"+approverID+"> via Slack") ||
		!strings.Contains(m.Text, "<@"+approverID+">") {
		t.Fatalf("updated message = %+v", m)
	}

	// A second press: the approver is told, nothing changes.
	e.interact(press(approverID, actDeny, buttonValue(a)))
	snap := e.await("ephemeral", func(s slacktest.Snapshot) bool { return len(s.Ephemerals) == 1 })
	if eph := snap.Ephemerals[0]; eph.User != approverID || !strings.Contains(eph.Text, "Already decided") {
		t.Fatalf("ephemeral = %+v", eph)
	}
	if n := len(e.fg.decided()); n != 1 {
		t.Fatalf("%d decisions, want 1", n)
	}
}

func TestPressByNonApprover(t *testing.T) {
	for _, approvers := range [][]string{{approverID}, nil} {
		a := testApproval("A1")
		fs := slacktest.New(t)
		fg := newFakeGate(a)
		cfg := testConfig(fs, false)
		cfg.Approvers = approvers
		bot, err := New(cfg, fg, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		bot.interaction(ctx, cbOf(t, press(strangerID, actApprove, buttonValue(a))))
		bot.interaction(ctx, cbOf(t, press(strangerID, actDenyReason, buttonValue(a))))
		snap := fs.Snapshot()
		if len(fg.decided()) != 0 || len(snap.Views) != 0 {
			t.Fatalf("approvers %v: a stranger's press changed something: %+v %+v", approvers, fg.decided(), snap.Views)
		}
		if len(snap.Ephemerals) != 2 || !strings.Contains(snap.Ephemerals[0].Text, "not allowed") || snap.Ephemerals[0].User != strangerID {
			t.Fatalf("approvers %v: ephemerals = %+v", approvers, snap.Ephemerals)
		}
		bot.Close()
	}
}

func TestReasonModal(t *testing.T) {
	a := testApproval("A1")
	e := start(t, true, a)
	e.notify(a)
	e.interact(press(approverID, actDenyReason, buttonValue(a)))
	snap := e.await("views.open", func(s slacktest.Snapshot) bool { return len(s.Views) == 1 })
	var v struct {
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
	}
	if err := json.Unmarshal(snap.Views[0].View, &v); err != nil || v.CallbackID != reasonCallbackID || snap.Views[0].TriggerID != "1337.42.abcd" {
		t.Fatalf("modal = %s (%v)", snap.Views[0].View, err)
	}
	if len(e.fg.decided()) != 0 {
		t.Fatal("opening the modal decided")
	}

	// A submission by someone else is refused in the modal.
	ack := e.interact(reasonSubmission(strangerID, v.PrivateMetadata, "nope"))
	if !strings.Contains(string(ack), `"response_action":"errors"`) || !strings.Contains(string(ack), "not allowed") {
		t.Fatalf("stranger's submission ack = %s", ack)
	}
	if len(e.fg.decided()) != 0 {
		t.Fatal("a stranger's submission decided")
	}

	if ack := e.interact(reasonSubmission(approverID, v.PrivateMetadata, "touches prod")); string(ack) != "null" {
		t.Fatalf("ack = %s, want empty (closes the modal)", ack)
	}
	d := e.fg.decided()
	if len(d) != 1 || d[0].Approve || d[0].Stop || d[0].Reason != "touches prod" || d[0].By != "<@"+approverID+">" {
		t.Fatalf("decisions = %+v", d)
	}
	// Submitting again tells the approver it is already decided.
	ack = e.interact(reasonSubmission(approverID, v.PrivateMetadata, "again"))
	if !strings.Contains(string(ack), "Already decided") {
		t.Fatalf("second submission ack = %s", ack)
	}
}

func TestStopAndDigestMismatch(t *testing.T) {
	a := testApproval("A1")
	e := start(t, true, a)
	e.interact(press(approverID, actStop, "A1|ffffffffffffffff"))
	snap := e.await("ephemeral", func(s slacktest.Snapshot) bool { return len(s.Ephemerals) == 1 })
	if !strings.Contains(snap.Ephemerals[0].Text, "no longer matches") || len(e.fg.decided()) != 0 {
		t.Fatalf("mismatched press: %+v %+v", snap.Ephemerals, e.fg.decided())
	}
	e.interact(press(approverID, actStop, "A1|0123"))
	e.await("bad button", func(s slacktest.Snapshot) bool { return len(s.Ephemerals) == 2 })
	e.interact(press(approverID, actStop, buttonValue(a)))
	if d := e.awaitDecisions(1)[0]; !d.Stop || d.Approve {
		t.Fatalf("stop decision = %+v", d)
	}
}

func TestRateLimitedPostIsRetried(t *testing.T) {
	a := testApproval("A1")
	e := start(t, false, a)
	e.fs.RateLimit("chat.postMessage", 1)
	m := e.notify(a)
	snap := e.fs.Snapshot()
	if len(snap.Messages) != 1 || snap.Calls["chat.postMessage"] != 2 {
		t.Fatalf("messages %d, postMessage calls %d; want 1 and 2", len(snap.Messages), snap.Calls["chat.postMessage"])
	}
	if got, _ := e.fg.Get(e.ctx, "A1"); ref(got) == nil || ref(got).MessageID != m.TS {
		t.Fatal("ref not recorded after the retry")
	}
}

func TestDroppedSocketReconnects(t *testing.T) {
	a := testApproval("A1")
	e := start(t, true, a)
	e.notify(a)
	e.fs.DropConnection()
	if err := e.fs.AwaitConnections(e.ctx, 2); err != nil {
		t.Fatal(err)
	}
	e.interact(press(approverID, actApprove, buttonValue(a)))
	if d := e.awaitDecisions(1)[0]; !d.Approve || d.Always {
		t.Fatalf("decision after reconnect = %+v", d)
	}
}

func TestRestartRefreshesOrReposts(t *testing.T) {
	a := testApproval("A1")
	e := start(t, false, a)
	m := e.notify(a)

	again, _ := e.fg.Get(e.ctx, "A1")
	again.Restarts = 1
	if err := e.bot.Notify(e.ctx, again); err != nil {
		t.Fatal(err)
	}
	snap := e.fs.Snapshot()
	if len(snap.Messages) != 1 || snap.Messages[0].Updates != 1 || !strings.Contains(snap.Messages[0].Blocks, "Still waiting") ||
		!strings.Contains(snap.Messages[0].Blocks, `"action_id":"approve"`) {
		t.Fatalf("after restart: %+v", snap.Messages)
	}
	// The message is gone: post a new one and record it.
	gone := clone(again)
	gone.Messages = []gate.MessageRef{{Frontend: Name, ChatID: chanID, MessageID: "1.2"}}
	if err := e.bot.Notify(e.ctx, gone); err != nil {
		t.Fatal(err)
	}
	snap = e.fs.Snapshot()
	if len(snap.Messages) != 2 {
		t.Fatalf("want a re-post, have %d messages", len(snap.Messages))
	}
	if got, _ := e.fg.Get(e.ctx, "A1"); ref(got).MessageID == m.TS {
		t.Fatal("the new message was not recorded")
	}
}

func TestLongBodyGoesToThread(t *testing.T) {
	a := testApproval("A1")
	setCommand(a, "echo "+strings.Repeat("x&<y> ", 2000))
	e := start(t, false, a)
	m := e.notify(a)
	if !strings.Contains(m.Blocks, "cut: ") || !strings.Contains(m.Blocks, "full text is in this message") {
		t.Fatalf("long body not cut with a marker")
	}
	var blocks []map[string]any
	if err := json.Unmarshal([]byte(m.Blocks), &blocks); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if txt, ok := b["text"].(map[string]any); ok {
			if n := len([]rune(txt["text"].(string))); n > maxSectionText {
				t.Fatalf("section text of %d characters", n)
			}
		}
	}
	snap := e.fs.Snapshot()
	var thread string
	for _, tm := range snap.Messages[1:] {
		if tm.ThreadTS != m.TS {
			t.Fatalf("follow-up not in the thread: %+v", tm)
		}
		thread += tm.Text
	}
	if len(snap.Messages) < 4 || strings.Count(thread, "&lt;") != 2000 || strings.Contains(thread, "<") {
		t.Fatalf("thread has %d messages, %d copies", len(snap.Messages)-1, strings.Count(thread, "&lt;"))
	}
}

func TestSlashCommands(t *testing.T) {
	a := testApproval("A1")
	e := start(t, true, a)
	e.fg.rules = []gate.AlwaysRule{{ID: "R1", Agent: "claude", Tool: "Bash", Pattern: "<!channel> ls", Scope: gate.ScopeAgent}}
	cmd := func(user, text string) string {
		id, err := e.fs.SendSlashCommand(map[string]any{"command": "/approvalbot", "text": text, "user_id": user, "channel_id": chanID})
		if err != nil {
			t.Fatal(err)
		}
		ack, err := e.fs.AwaitAck(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var ans struct{ ResponseType, Text string }
		if err := json.Unmarshal(ack, &ans); err != nil {
			t.Fatalf("ack %s: %v", ack, err)
		}
		if !strings.Contains(string(ack), `"response_type":"ephemeral"`) {
			t.Fatalf("answer not ephemeral: %s", ack)
		}
		return ans.Text
	}
	tests := []struct{ user, text, want string }{
		{strangerID, "pending", "A1 — claude wants to run Bash: rm -rf build"},
		{strangerID, "rules", "R1 — claude Bash: &lt;!channel&gt; ls"},
		{strangerID, "revoke R1", "not allowed"},
		{strangerID, "mode claude strict", "not allowed"},
		{approverID, "mode claude sloppy", "Unknown mode"},
		{approverID, "mode claude strict", "now strict"},
		{approverID, "revoke R1", "Revoked rule R1"},
		{approverID, "rules", "No Always rules"},
		{approverID, "", "Usage"},
	}
	for _, tc := range tests {
		if got := cmd(tc.user, tc.text); !strings.Contains(got, tc.want) {
			t.Errorf("%s %q = %q, want %q", tc.user, tc.text, got, tc.want)
		}
	}
	if e.fg.mode("claude") != gate.ModeStrict {
		t.Error("mode not set")
	}
}

func TestSendErrClassification(t *testing.T) {
	if err := sendErr(errors.New("net")); outbox.IsPermanent(err) {
		t.Error("network error treated as permanent")
	}
}

func TestRunSurvivesFatalConnectError(t *testing.T) {
	a := testApproval("A1")
	fs := slacktest.New(t)
	// socketmode's RunContext gives up on invalid_auth; Run must not.
	fs.Fail("apps.connections.open", "invalid_auth")
	fg := newFakeGate(a)
	bot, err := New(testConfig(fs, true), fg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- bot.Run(runCtx) }()
	if err := fs.AwaitConnections(ctx, 1); err != nil {
		t.Fatalf("no reconnection after a fatal error: %v", err)
	}
	if n := fs.Snapshot().Calls["apps.connections.open"]; n != 2 {
		t.Fatalf("apps.connections.open called %d times, want 2", n)
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned before ctx ended: %v", err)
	default:
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run after ctx end: %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []Config{
		{Channel: "C1", AppToken: "xapp-1"},
		{BotToken: "xoxb-1", AppToken: "xapp-1"},
		{BotToken: "xoxb-1", Channel: "C1"},
		{BotToken: "xoxb-1", Channel: "C1", AppToken: "xoxb-wrong"},
	} {
		if _, err := New(cfg, newFakeGate(), nil); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

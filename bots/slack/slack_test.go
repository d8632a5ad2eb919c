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
	"approvalbot/gate/gatetest"
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
	gt  *gatetest.Env
	g   *gate.Gate
	bot *Bot
}

func testConfig(fs *slacktest.Server, socket bool) Config {
	cfg := Config{BotToken: "xoxb-test", Channel: chanID, Approvers: []string{approverID},
		SigningSecret: secret, APIURL: fs.APIURL(),
		Limits:   outbox.Limits{PerDest: time.Millisecond, BackoffMin: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond},
		Now:      func() time.Time { return t0.Add(time.Minute) },
		NoGroups: true} // grouped views have their own tests (group_test.go)
	if socket {
		cfg.AppToken = "xapp-test"
	}
	return cfg
}

// start runs a bot against a fake Slack, as the notifier of the real gate
// (on an in-memory store); with socket, over Socket Mode.
func start(t *testing.T, socket bool) *env {
	t.Helper()
	return startOn(t, socket, nil, nil, func(*Config) {})
}

// startOn is start on store st and fake Slack fs (nil: new ones), with
// the config changed by mod.
func startOn(t *testing.T, socket bool, st gate.Store, fs *slacktest.Server, mod func(*Config)) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	if fs == nil {
		fs = slacktest.New(t)
	}
	e := &env{t: t, ctx: ctx, fs: fs}
	e.gt = gatetest.New(t, gatetest.Options{Store: st, NoStart: true})
	e.g = e.gt.G
	cfg := testConfig(e.fs, socket)
	cfg.Now = e.gt.Clock.Now
	mod(&cfg)
	bot, err := New(cfg, e.g, nil)
	if err != nil {
		t.Fatalf("new bot: %v", err)
	}
	e.bot = bot
	e.g.AddNotifier(bot)
	if err := e.g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- bot.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		e.g.Close()
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

// add submits a Bash call of cmd; it must ask.
func (e *env) add(cmd string) *gate.Approval {
	e.t.Helper()
	return e.gt.Ask(e.t, gatetest.Bash(cmd))
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

// notify waits until the gate has posted a's prompt, and returns it.
func (e *env) notify(a *gate.Approval) slacktest.Message {
	e.t.Helper()
	got := e.gt.Shown(e.t, a.ID, Name)
	ts := ref(got).MessageID
	for _, m := range e.fs.Snapshot().Messages {
		if m.TS == ts {
			return m
		}
	}
	e.t.Fatalf("no message %s", ts)
	return slacktest.Message{}
}

// ref is a's Slack message ref, or nil.
func ref(a *gate.Approval) *gate.MessageRef {
	for i := range a.Messages {
		if a.Messages[i].Frontend == Name {
			return &a.Messages[i]
		}
	}
	return nil
}

func (e *env) await(what string, cond func(slacktest.Snapshot) bool) slacktest.Snapshot {
	e.t.Helper()
	if err := e.fs.Await(e.ctx, cond); err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
	return e.fs.Snapshot()
}

// decided waits until the approval with id is final and returns it.
func (e *env) decided(id string) *gate.Approval {
	e.t.Helper()
	a, err := e.g.Wait(e.ctx, id)
	if err != nil || !a.Status.Final() {
		e.t.Fatalf("approval %s never decided: %v", id, err)
	}
	return a
}

// pending fails the test if the approval with id was decided.
func (e *env) pending(id string) {
	e.t.Helper()
	if a := e.gt.Get(e.t, id); a.Status != gate.StatusPending {
		e.t.Fatalf("approval %s was decided: %s by %s", id, a.Status, a.DecidedBy)
	}
}

func TestPostPressUpdate(t *testing.T) {
	e := start(t, true)
	a := e.add("rm -rf build")
	m := e.notify(a)
	if m.Channel != chanID || !strings.Contains(m.Blocks, `"action_id":"approve"`) || !strings.Contains(m.Blocks, "rm -rf build") {
		t.Fatalf("posted message lacks the prompt: %+v", m)
	}
	for _, want := range []string{`"action_id":"always"`, `"action_id":"deny"`, `"action_id":"deny_reason"`, `"action_id":"stop"`, "deletes recursively"} {
		if !strings.Contains(m.Blocks, want) {
			t.Errorf("blocks lack %s", want)
		}
	}

	// Always asks for the scope first, in the message itself.
	if ack := e.interact(press(approverID, actAlways, buttonValue(a))); string(ack) != "null" {
		t.Errorf("ack payload = %s, want empty", ack)
	}
	snap := e.await("the scope step", func(s slacktest.Snapshot) bool {
		return strings.Contains(s.Messages[0].Blocks, actScopePrefix+"session")
	})
	if b := snap.Messages[0].Blocks; !strings.Contains(b, "This session") || !strings.Contains(b, "This agent") || strings.Contains(b, `"action_id":"approve"`) {
		t.Fatalf("scope step = %s", b)
	}
	e.pending(a.ID)
	e.interact(press(approverID, actScopePrefix+"session", buttonValue(a)))
	got := e.decided(a.ID)
	if got.Status != gate.StatusApprovedAlways || got.DecidedBy != "<@"+approverID+">" || got.Via != "slack" {
		t.Fatalf("decided = %+v", got)
	}
	// Decide saves the rule after the decision is final (which ends Wait).
	gatetest.Eventually(t, "the session-scoped Always rule", func() bool {
		rules, _ := e.g.Rules(e.ctx, "claude")
		return len(rules) == 1 && rules[0].Scope == gate.ScopeSession
	})
	// The gate edits the prompt to the outcome.
	snap = e.await("the outcome", func(s slacktest.Snapshot) bool { return strings.Contains(s.Messages[0].Blocks, "Approved always") })
	m = snap.Messages[0]
	if strings.Contains(m.Blocks, `"action_id"`) || !strings.Contains(blockTexts(t, m.Blocks), "Approved always by <@"+approverID+"> via Slack") ||
		!strings.Contains(m.Text, "<@"+approverID+">") {
		t.Fatalf("updated message = %+v", m)
	}

	// A second press: the approver is told, nothing changes.
	e.interact(press(approverID, actDeny, buttonValue(a)))
	snap = e.await("ephemeral", func(s slacktest.Snapshot) bool { return len(s.Ephemerals) == 1 })
	if eph := snap.Ephemerals[0]; eph.User != approverID || !strings.Contains(eph.Text, "Already decided") {
		t.Fatalf("ephemeral = %+v", eph)
	}
	if got := e.gt.Get(t, a.ID); got.Status != gate.StatusApprovedAlways {
		t.Fatalf("status %s after a second press", got.Status)
	}
}

func TestAlwaysScopeBackAndAgent(t *testing.T) {
	e := start(t, true)
	a := e.add("make deploy")
	e.notify(a)
	e.interact(press(approverID, actAlways, buttonValue(a)))
	e.await("the scope step", func(s slacktest.Snapshot) bool { return strings.Contains(s.Messages[0].Blocks, actBack) })
	e.interact(press(approverID, actBack, buttonValue(a)))
	e.await("the buttons again", func(s slacktest.Snapshot) bool {
		return strings.Contains(s.Messages[0].Blocks, `"action_id":"approve"`)
	})
	e.pending(a.ID)
	e.interact(press(approverID, actScopePrefix+"agent", buttonValue(a)))
	if got := e.decided(a.ID); got.Status != gate.StatusApprovedAlways {
		t.Fatalf("status %s", got.Status)
	}
	// Decide saves the rule after the decision is final (which ends Wait).
	gatetest.Eventually(t, "the agent-scoped Always rule", func() bool {
		rules, _ := e.g.Rules(e.ctx, "claude")
		return len(rules) == 1 && rules[0].Scope == gate.ScopeAgent
	})
}

func TestPressByNonApprover(t *testing.T) {
	for _, approvers := range [][]string{{approverID}, nil} {
		e := startOn(t, false, nil, nil, func(c *Config) { c.Approvers = approvers })
		a := e.add("rm -rf build")
		ctx := context.Background()
		for _, act := range []string{actApprove, actDenyReason, actAlways, actScopePrefix + "agent", actStop} {
			e.bot.interaction(ctx, cbOf(t, press(strangerID, act, buttonValue(a))))
		}
		snap := e.fs.Snapshot()
		e.pending(a.ID)
		if len(snap.Views) != 0 {
			t.Fatalf("approvers %v: a stranger opened a modal: %+v", approvers, snap.Views)
		}
		if len(snap.Ephemerals) != 5 || !strings.Contains(snap.Ephemerals[0].Text, "not allowed") || snap.Ephemerals[0].User != strangerID {
			t.Fatalf("approvers %v: ephemerals = %+v", approvers, snap.Ephemerals)
		}
	}
}

func TestReasonModal(t *testing.T) {
	e := start(t, true)
	a := e.add("rm -rf build")
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
	e.pending(a.ID)

	// A submission by someone else is refused in the modal.
	ack := e.interact(reasonSubmission(strangerID, v.PrivateMetadata, "nope"))
	if !strings.Contains(string(ack), `"response_action":"errors"`) || !strings.Contains(string(ack), "not allowed") {
		t.Fatalf("stranger's submission ack = %s", ack)
	}
	e.pending(a.ID)

	if ack := e.interact(reasonSubmission(approverID, v.PrivateMetadata, "touches prod")); string(ack) != "null" {
		t.Fatalf("ack = %s, want empty (closes the modal)", ack)
	}
	got := e.decided(a.ID)
	if got.Status != gate.StatusDenied || got.Reason != "touches prod" || got.DecidedBy != "<@"+approverID+">" {
		t.Fatalf("decided = %+v", got)
	}
	// Submitting again tells the approver it is already decided.
	ack = e.interact(reasonSubmission(approverID, v.PrivateMetadata, "again"))
	if !strings.Contains(string(ack), "Already decided") {
		t.Fatalf("second submission ack = %s", ack)
	}
}

func TestStopAndDigestMismatch(t *testing.T) {
	e := start(t, true)
	a := e.add("rm -rf build")
	e.interact(press(approverID, actStop, a.ID+"|ffffffffffffffff"))
	snap := e.await("ephemeral", func(s slacktest.Snapshot) bool { return len(s.Ephemerals) == 1 })
	if !strings.Contains(snap.Ephemerals[0].Text, "no longer matches") {
		t.Fatalf("mismatched press: %+v", snap.Ephemerals)
	}
	e.pending(a.ID)
	e.interact(press(approverID, actStop, a.ID+"|0123"))
	e.await("bad button", func(s slacktest.Snapshot) bool { return len(s.Ephemerals) == 2 })
	e.interact(press(approverID, actStop, buttonValue(a)))
	if got := e.decided(a.ID); got.Status != gate.StatusDeniedStop {
		t.Fatalf("stop = %s", got.Status)
	}
}

func TestRateLimitedPostIsRetried(t *testing.T) {
	e := start(t, false)
	e.fs.RateLimit("chat.postMessage", 1)
	a := e.add("make")
	m := e.notify(a)
	snap := e.fs.Snapshot()
	if len(snap.Messages) != 1 || snap.Calls["chat.postMessage"] != 2 || snap.Messages[0].TS != m.TS {
		t.Fatalf("messages %d, postMessage calls %d; want 1 and 2", len(snap.Messages), snap.Calls["chat.postMessage"])
	}
}

func TestDroppedSocketReconnects(t *testing.T) {
	e := start(t, true)
	a := e.add("make")
	e.notify(a)
	e.fs.DropConnection()
	if err := e.fs.AwaitConnections(e.ctx, 2); err != nil {
		t.Fatal(err)
	}
	e.interact(press(approverID, actApprove, buttonValue(a)))
	if got := e.decided(a.ID); got.Status != gate.StatusApproved {
		t.Fatalf("decision after reconnect = %s", got.Status)
	}
}

func TestRestartRefreshesOrReposts(t *testing.T) {
	e := start(t, false)
	a := e.add("make")
	m := e.notify(a)
	b := e.add("make other")
	e.notify(b)
	// b's message is gone (deleted in Slack): the restart posts it anew.
	if _, err := e.g.AddMessageRef(e.ctx, b.ID, gate.MessageRef{Frontend: Name, ChatID: chanID, MessageID: "1.2"}); err != nil {
		t.Fatal(err)
	}
	e.g.Close()
	e2 := startOn(t, false, e.gt.Store, e.fs, func(*Config) {})
	snap := e2.await("the refresh and the re-post", func(s slacktest.Snapshot) bool {
		return len(s.Messages) == 3 && strings.Contains(s.Messages[0].Blocks, "Still waiting")
	})
	if first := snap.Messages[0]; first.TS != m.TS || !strings.Contains(first.Blocks, `"action_id":"approve"`) {
		t.Fatalf("after restart: %+v", first)
	}
	gatetest.Eventually(t, "the re-post's ref", func() bool { return ref(e2.gt.Get(t, b.ID)).MessageID == snap.Messages[2].TS })
	// The old buttons work on the new daemon.
	e2.bot.interaction(e2.ctx, cbOf(t, press(approverID, actApprove, buttonValue(a))))
	if got := e2.decided(a.ID); got.Status != gate.StatusApproved {
		t.Fatalf("old button after restart: %s", got.Status)
	}
}

func TestLongBodyGoesToThread(t *testing.T) {
	e := start(t, false)
	a := e.add("echo " + strings.Repeat("x&<y> ", 2000))
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
	snap := e.await("the thread", func(s slacktest.Snapshot) bool { return len(s.Messages) >= 4 })
	var thread string
	for _, tm := range snap.Messages[1:] {
		if tm.ThreadTS != m.TS {
			t.Fatalf("follow-up not in the thread: %+v", tm)
		}
		thread += tm.Text
	}
	if strings.Count(thread, "&lt;") != 2000 || strings.Contains(thread, "<") {
		t.Fatalf("thread has %d messages, %d copies", len(snap.Messages)-1, strings.Count(thread, "&lt;"))
	}
}

func TestSlashCommands(t *testing.T) {
	e := start(t, true)
	a := e.add("rm -rf build")
	r, err := e.g.AddRule(e.ctx, gate.AlwaysRule{Agent: "claude", Tool: "Bash", Pattern: "<!channel> ls", Scope: gate.ScopeAgent})
	if err != nil {
		t.Fatal(err)
	}
	channel := chanID
	cmd := func(user, text string) string {
		id, err := e.fs.SendSlashCommand(map[string]any{"command": "/approvalbot", "text": text, "user_id": user, "channel_id": channel})
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
		{strangerID, "pending", "Only approvers"},
		{strangerID, "rules", "Only approvers"},
		{approverID, "pending", a.ID + " — claude wants to run Bash: rm -rf build"},
		{approverID, "rules", r.ID + " — claude Bash: &lt;!channel&gt; ls"},
		{strangerID, "revoke " + r.ID, "not allowed"},
		{strangerID, "mode claude strict", "not allowed"},
		{approverID, "mode claude sloppy", "Unknown mode"},
		{approverID, "revoke " + r.ID, "Revoked rule " + r.ID},
		{approverID, "rules", "No Always rules"},
		{approverID, "mode claude strict", "now strict"},
		{approverID, "", "Usage"},
	}
	for _, tc := range tests {
		if got := cmd(tc.user, tc.text); !strings.Contains(got, tc.want) {
			t.Errorf("%s %q = %q, want %q", tc.user, tc.text, got, tc.want)
		}
	}
	if m, _ := e.g.Mode(e.ctx, "claude"); m != gate.ModeStrict {
		t.Error("mode not set")
	}
	// An approver, but in another channel (or a DM): nothing is listed.
	channel = "C0RANDOM"
	for _, text := range []string{"pending", "rules"} {
		if got := cmd(approverID, text); !strings.Contains(got, "Only approvers") {
			t.Errorf("approver's %q from another channel = %q, want a refusal", text, got)
		}
	}
}

func TestSendErrClassification(t *testing.T) {
	if err := sendErr(errors.New("net")); outbox.IsPermanent(err) {
		t.Error("network error treated as permanent")
	}
}

func TestRunSurvivesFatalConnectError(t *testing.T) {
	fs := slacktest.New(t)
	// socketmode's RunContext gives up on invalid_auth; Run must not.
	fs.Fail("apps.connections.open", "invalid_auth")
	bot, err := New(testConfig(fs, true), nil, nil)
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
		if _, err := New(cfg, nil, nil); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

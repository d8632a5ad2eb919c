package slack

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/bots/outbox"
	"approvalbot/bots/slacktest"
	"approvalbot/bots/telegram"
	"approvalbot/bots/telegramtest"
	"approvalbot/gate"
	"approvalbot/store"
)

// realGate returns a started gate on a bbolt store in a temp dir whose
// policy asks about every call.
func realGate(t *testing.T, ctx context.Context, notifiers ...gate.Notifier) *gate.Gate {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "approvalbot.db"), store.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	p, err := gate.Compile(gate.PolicySpec{File: "test.jsonc", Rules: []gate.RuleSpec{
		{Tool: "*", Pattern: "*", Action: gate.Ask, File: "test.jsonc", Line: 1},
	}})
	if err != nil {
		t.Fatalf("compile policy: %v", err)
	}
	g := gate.New(gate.Config{}, p, st, nil)
	for _, n := range notifiers {
		g.AddNotifier(n)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatalf("start gate: %v", err)
	}
	t.Cleanup(func() {
		g.Close()
		st.Close()
	})
	return g
}

// lateGate lets a frontend be built before the gate it talks to.
type lateGate struct{ *gate.Gate }

// buttonOf returns the value of the button with actionID in a posted message.
func buttonOf(t *testing.T, blocksJSON, actionID string) string {
	t.Helper()
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(blocksJSON), &blocks); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		for _, el := range b.Elements {
			if el.ActionID == actionID {
				return el.Value
			}
		}
	}
	t.Fatalf("no %s button in %s", actionID, blocksJSON)
	return ""
}

func runBot(t *testing.T, ctx context.Context, run func(context.Context) error) {
	ctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		stop()
		<-done
	})
}

// TestRealGateSlackAndTelegram runs both frontends on one real gate: the
// first decision (in Slack) wins, a later press in Telegram changes
// nothing, and both messages show the outcome.
func TestRealGateSlackAndTelegram(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const tgToken, tgChat = "123456:TEST-token", int64(4242)
	ana := tgbotapi.User{ID: 11, UserName: "ana"}

	fs := slacktest.New(t)
	tg := telegramtest.New(t, tgToken)
	lg := &lateGate{}
	cfg := testConfig(fs, true)
	cfg.Now = nil
	sb, err := New(cfg, lg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	tgLim := outbox.Limits{PerDest: time.Millisecond, BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond}
	tb, err := telegram.New(telegram.Config{Token: tgToken, ChatID: tgChat, Approvers: []int64{ana.ID},
		APIURL: tg.APIURL(), PollTimeout: time.Second, Limits: &tgLim}, lg, nil)
	if err != nil {
		t.Fatal(err)
	}
	lg.Gate = realGate(t, ctx, sb, tb)
	runBot(t, ctx, sb.Run)
	runBot(t, ctx, tb.Run)
	if err := fs.AwaitConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}

	a, err := lg.Submit(ctx, gate.Call{Agent: "claude", SessionID: "s1", Tool: "Deploy",
		Input: json.RawMessage(`{"target":"prod <!channel>"}`), Cwd: "/p"})
	if err != nil || a.Status != gate.StatusPending {
		t.Fatalf("submit: %+v %v", a, err)
	}
	var posted slacktest.Message
	if err := fs.Await(ctx, func(s slacktest.Snapshot) bool {
		if len(s.Messages) == 1 {
			posted = s.Messages[0]
			return true
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	tgMsg, err := tg.WaitMessage(ctx, tgChat, func(m telegramtest.Message) bool { return m.Keyboard != nil })
	if err != nil {
		t.Fatal(err)
	}
	// Both frontends recorded their message.
	if err := waitFor(ctx, func() bool {
		got, err := lg.Get(ctx, a.ID)
		return err == nil && len(got.Messages) == 2
	}); err != nil {
		t.Fatalf("message refs: %v", err)
	}

	if _, err := fs.SendInteractive(press(approverID, actApprove, buttonOf(t, posted.Blocks, actApprove))); err != nil {
		t.Fatal(err)
	}
	final, err := lg.Wait(ctx, a.ID)
	if err != nil || final.Status != gate.StatusApproved || final.DecidedBy != "<@"+approverID+">" || final.Via != "slack" {
		t.Fatalf("wait: %+v %v", final, err)
	}

	// A late press in Telegram is refused and changes nothing.
	var data string
	for _, b := range tgMsg.Buttons() {
		if strings.Contains(strings.ToLower(b[0]), "deny") {
			data = b[1]
			break
		}
	}
	if data == "" {
		t.Fatalf("no deny button in telegram message: %+v", tgMsg.Buttons())
	}
	qid := tg.Press(tgChat, tgMsg.ID, ana, data)
	if _, err := tg.WaitAnswer(ctx, qid); err != nil {
		t.Fatal(err)
	}
	if again, _ := lg.Get(ctx, a.ID); again.Status != gate.StatusApproved {
		t.Fatalf("late telegram press changed the outcome: %s", again.Status)
	}

	// Both messages show the outcome, without buttons.
	if err := fs.Await(ctx, func(s slacktest.Snapshot) bool {
		m := s.Messages[0]
		return m.Updates > 0 && !strings.Contains(m.Blocks, `"action_id"`) && strings.Contains(m.Blocks, "Approved by")
	}); err != nil {
		t.Fatalf("slack message not updated: %v; %+v", err, fs.Snapshot().Messages)
	}
	if _, err := tg.WaitMessage(ctx, tgChat, func(m telegramtest.Message) bool {
		return m.ID == tgMsg.ID && m.Keyboard == nil && strings.Contains(m.Text, "Approved")
	}); err != nil {
		t.Fatalf("telegram message not edited: %v; %+v", err, tg.Messages(tgChat))
	}
	if txt := blockTexts(t, fs.Snapshot().Messages[0].Blocks); strings.Contains(txt, "<!channel>") || !strings.Contains(txt, "&lt;!channel&gt;") {
		t.Fatal("agent text reached Slack unescaped")
	}
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

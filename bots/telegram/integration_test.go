package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalbot/bots/outbox"
	"approvalbot/bots/telegramtest"
	"approvalbot/gate"
	"approvalbot/store"
)

func TestBurstOfPromptsIsPacedAndComplete(t *testing.T) {
	const n = 100
	const gap = 3 * time.Millisecond
	h := newHarness(t, func(c *Config) {
		c.Limits = &outbox.Limits{PerDest: gap, BackoffMin: time.Millisecond, BackoffMax: 4 * time.Millisecond}
	})
	// Failures in the middle of the burst must lose nothing and duplicate nothing.
	h.srv.Fail("sendMessage", telegramtest.Fault{Drop: true}, telegramtest.Fault{Code: 500, Description: "Internal Server Error"})
	var ids []string
	for i := range n {
		if i == n/2 {
			h.srv.Fail("sendMessage", telegramtest.Fault{Drop: true})
		}
		ids = append(ids, h.add(fmt.Sprintf("make target%d", i)).ID)
	}
	for _, id := range ids {
		h.env.Shown(t, id, Name)
	}
	msgs := h.srv.Messages(testChat)
	if len(msgs) != n {
		t.Fatalf("%d messages delivered, want %d", len(msgs), n)
	}
	for i, m := range msgs {
		if p := plain(t, m); !strings.Contains(p, "ID: "+ids[i]) {
			t.Fatalf("message %d is not %s:\n%s", i, ids[i], p)
		}
	}
	// The outbox spaces sends by gap; arrival times at the fake jitter by
	// request latency, so check the span of every run of 10 sends, with one
	// gap of tolerance.
	calls := h.srv.Calls("sendMessage")
	for i := 10; i < len(calls); i++ {
		if span := calls[i].At.Sub(calls[i-10].At); span < 9*gap {
			t.Errorf("sends %d..%d span %s, want >= %s at one per %s", i-10, i, span, 9*gap, gap)
		}
	}
}

// TestWithRealGate runs the bot as the gate's notifier on a bbolt store,
// through a decision, a restart with an old button, and a deny.
func TestWithRealGate(t *testing.T) {
	srv := telegramtest.New(t, testToken)
	dir := t.TempDir()
	policy, err := gate.Compile(gate.PolicySpec{File: "test.jsonc", Rules: []gate.RuleSpec{
		{Tool: "*", Pattern: "*", Action: gate.Ask, File: "test.jsonc", Line: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	lim := testLimits
	cfg := Config{Token: testToken, ChatID: testChat, Approvers: []int64{ana.ID}, APIURL: srv.APIURL(), PollTimeout: time.Second, Limits: &lim}

	type daemon struct {
		st     *store.Store
		g      *gate.Gate
		bot    *Bot
		cancel context.CancelFunc
		done   chan error
	}
	start := func() *daemon {
		st, err := store.Open(filepath.Join(dir, "approvalbot.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		g := gate.New(gate.Config{Timeout: time.Hour}, policy, st, slog.New(slog.DiscardHandler))
		bot, err := New(cfg, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		g.AddNotifier(bot)
		ctx, cancel := context.WithCancel(context.Background())
		d := &daemon{st: st, g: g, bot: bot, cancel: cancel, done: make(chan error, 1)}
		go func() { d.done <- bot.Run(ctx) }()
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return d
	}
	stop := func(d *daemon) {
		d.cancel()
		if err := <-d.done; err != nil {
			t.Errorf("Run: %v", err)
		}
		d.g.Close()
		d.bot.Close()
		d.st.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	submit := func(g *gate.Gate, cmd string) *gate.Approval {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		a, err := g.Submit(ctx, gate.Call{Agent: "claude", SessionID: "s1", Tool: "Bash", Input: in, Cwd: "/tmp"})
		if err != nil || a.Status != gate.StatusPending {
			t.Fatalf("submit: %v %+v", err, a)
		}
		return a
	}
	promptOf := func(id string) telegramtest.Message {
		m, err := srv.WaitMessage(ctx, testChat, func(m telegramtest.Message) bool {
			return strings.Contains(m.Text, id) && len(m.Buttons()) > 0
		})
		if err != nil {
			t.Fatalf("no prompt for %s", id)
		}
		return m
	}

	d := start()
	a := submit(d.g, "git push origin main")
	m := promptOf(a.ID)
	q := srv.Press(testChat, m.ID, eve, dataOf(t, m, "✅ Approve"))
	if ans, _ := srv.WaitAnswer(ctx, q); !ans.ShowAlert {
		t.Errorf("non-approver press answered %+v", ans)
	}
	srv.Press(testChat, m.ID, ana, dataOf(t, m, "✅ Approve"))
	got, err := d.g.Wait(ctx, a.ID)
	if err != nil || got.Status != gate.StatusApproved || got.DecidedBy != "@ana" || got.Via != "telegram" {
		t.Fatalf("after press: %v %+v", err, got)
	}
	if _, err := srv.WaitMessage(ctx, testChat, func(mm telegramtest.Message) bool {
		return mm.ID == m.ID && strings.Contains(mm.Text, "Approved by @ana via Telegram") && len(mm.Buttons()) == 0
	}); err != nil {
		t.Errorf("outcome not shown: %q", m.Text)
	}

	// A prompt outstanding across a restart keeps its message and buttons.
	b := submit(d.g, "rm -rf build")
	old := promptOf(b.ID)
	for {
		got, err := d.g.Get(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if promptIn(got, testChat) != 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("message ref never recorded")
		}
		time.Sleep(time.Millisecond) // poll the store until the ref is durable
	}
	stop(d)
	d = start()
	defer stop(d)
	if _, err := srv.WaitMessage(ctx, testChat, func(mm telegramtest.Message) bool {
		return mm.ID == old.ID && strings.Contains(mm.Text, "Still waiting")
	}); err != nil {
		t.Fatal("prompt not refreshed after restart")
	}
	for _, mm := range srv.Messages(testChat) {
		if mm.ID != old.ID && strings.Contains(mm.Text, b.ID) && len(mm.Buttons()) > 0 {
			t.Errorf("restart sent a second prompt %d", mm.ID)
		}
	}
	srv.Press(testChat, old.ID, ana, dataOf(t, old, "🛑 Stop"))
	got, err = d.g.Wait(ctx, b.ID)
	if err != nil || got.Status != gate.StatusDeniedStop {
		t.Fatalf("old button after restart: %v %+v", err, got)
	}
}

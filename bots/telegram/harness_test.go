package telegram

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/bots/frontendtest"
	"approvalbot/bots/outbox"
	"approvalbot/bots/telegramtest"
	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

const (
	testToken = "123456:SECRET-token_abcdef"
	testChat  = int64(4242)
)

var (
	ana = tgbotapi.User{ID: 11, UserName: "ana", FirstName: "Ana"}
	eve = tgbotapi.User{ID: 66, UserName: "eve", FirstName: "Eve"}
)

// strangerN is a user who is not an approver, a different one for each n
// (the bot answers each stranger once a minute).
func strangerN(n int) tgbotapi.User {
	return tgbotapi.User{ID: 700 + int64(n), UserName: "stranger" + strconv.Itoa(n)}
}

// testLimits are short so tests run fast while pacing still applies.
var testLimits = outbox.Limits{PerDest: 2 * time.Millisecond, BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond}

type harness struct {
	t    *testing.T
	srv  *telegramtest.Server
	env  *gatetest.Env
	g    *gate.Gate
	bot  *Bot
	logs *frontendtest.LogBuffer
	cfg  Config
}

// newHarness builds a bot on a fake Bot API and the real gate (on an
// in-memory store), with the bot as the gate's notifier.
func newHarness(t *testing.T, mod func(*Config)) *harness {
	t.Helper()
	return newHarnessOn(t, nil, gate.Config{}, mod)
}

// newHarnessOn is newHarness on store st (nil: a new one) and gate config gc.
func newHarnessOn(t *testing.T, st gate.Store, gc gate.Config, mod func(*Config)) *harness {
	t.Helper()
	return newHarnessWith(t, gatetest.Options{Config: gc, Store: st}, mod)
}

// newHarnessWith is newHarness on a gate built with o (o.NoStart is
// implied: the bot is added as a notifier before Start).
func newHarnessWith(t *testing.T, o gatetest.Options, mod func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, srv: telegramtest.New(t, testToken), logs: &frontendtest.LogBuffer{}}
	o.NoStart = true
	h.env = gatetest.New(t, o)
	h.g = h.env.G
	lim := testLimits
	h.cfg = Config{Token: testToken, ChatID: testChat, Approvers: []int64{ana.ID}, APIURL: h.srv.APIURL(),
		PollTimeout: time.Second, Limits: &lim, Now: h.env.Clock.Now,
		NoGroups: true} // grouped views have their own tests (group_test.go)
	if mod != nil {
		mod(&h.cfg)
	}
	h.start()
	h.g.AddNotifier(h.bot)
	if err := h.g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) start() {
	t := h.t
	logger := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	bot, err := New(h.cfg, h.g, logger)
	if err != nil {
		t.Fatal(err)
	}
	h.bot = bot
	t.Cleanup(func() {
		h.g.Close() // stops the gate's queue before the bot's outbox
		bot.Close()
		if strings.Contains(h.logs.String(), "SECRET-token") {
			t.Errorf("the token was logged:\n%s", h.logs.String())
		}
	})
}

// run starts the update loop; it is stopped when the test ends.
func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.bot.Run(ctx) }()
	h.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("Run: %v", err)
		}
	})
}

func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}

// add submits a Bash call of command to the gate; it must ask.
func (h *harness) add(command string) *gate.Approval {
	h.t.Helper()
	return h.env.Ask(h.t, gatetest.Bash(command))
}

// notify waits until the gate has shown a in the chat, and returns the
// message id.
func (h *harness) notify(a *gate.Approval) int {
	h.t.Helper()
	return promptIn(h.env.Shown(h.t, a.ID, Name), testChat)
}

// value is the stored value of key ("" if none).
func (h *harness) value(key string) string {
	v, _ := h.env.Store.GetValue(context.Background(), key)
	return v
}

func (h *harness) message(id int) telegramtest.Message {
	h.t.Helper()
	m, ok := h.srv.Message(testChat, id)
	if !ok {
		h.t.Fatalf("no message %d", id)
	}
	return m
}

// data returns the callback data of the button whose label starts with prefix.
func dataOf(t *testing.T, m telegramtest.Message, prefix string) string {
	t.Helper()
	for _, b := range m.Buttons() {
		if strings.HasPrefix(b[0], prefix) {
			return b[1]
		}
	}
	t.Fatalf("no button %q in %v", prefix, m.Buttons())
	return ""
}

// press presses a button and waits for the answer.
func (h *harness) press(msgID int, from tgbotapi.User, data string) tgbotapi.CallbackConfig {
	h.t.Helper()
	q := h.srv.Press(testChat, msgID, from, data)
	a, err := h.srv.WaitAnswer(h.ctx(), q)
	if err != nil {
		h.t.Fatalf("no answer to press %s: %v", data, err)
	}
	return a
}

// waitText waits until message id's plain text contains s.
func (h *harness) waitText(id int, s string) telegramtest.Message {
	h.t.Helper()
	m, err := h.srv.WaitMessage(h.ctx(), testChat, func(m telegramtest.Message) bool {
		plain, _ := telegramtest.ParseHTML(m.Text)
		return m.ID == id && strings.Contains(plain, s)
	})
	if err != nil {
		h.t.Fatalf("message %d never contained %q; now %q", id, s, h.message(id).Text)
	}
	return m
}

func plain(t *testing.T, m telegramtest.Message) string {
	t.Helper()
	if m.ParseMode != "HTML" {
		return m.Text
	}
	p, err := telegramtest.ParseHTML(m.Text)
	if err != nil {
		t.Fatalf("message %d is not valid HTML: %v", m.ID, err)
	}
	return p
}

func itoa(n int) string { return strconv.Itoa(n) }

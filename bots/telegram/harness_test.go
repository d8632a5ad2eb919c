package telegram

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/bots/outbox"
	"approvalbot/bots/telegramtest"
	"approvalbot/gate"
)

const (
	testToken = "123456:SECRET-token_abcdef"
	testChat  = int64(4242)
)

var (
	ana = tgbotapi.User{ID: 11, UserName: "ana", FirstName: "Ana"}
	eve = tgbotapi.User{ID: 66, UserName: "eve", FirstName: "Eve"}
)

// testLimits are short so tests run fast while pacing still applies.
var testLimits = outbox.Limits{PerDest: 2 * time.Millisecond, BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type harness struct {
	t    *testing.T
	srv  *telegramtest.Server
	g    Gate
	fake *fakeGate
	bot  *Bot
	logs *syncBuffer
	cfg  Config
}

// newHarness builds a bot on a fake Bot API and a fake gate (or g).
func newHarness(t *testing.T, mod func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, srv: telegramtest.New(t, testToken), fake: newFakeGate(), logs: &syncBuffer{}}
	h.g = h.fake
	lim := testLimits
	h.cfg = Config{Token: testToken, ChatID: testChat, Approvers: []int64{ana.ID}, APIURL: h.srv.APIURL(),
		PollTimeout: time.Second, Limits: &lim, Now: func() time.Time { return h.fake.now.Add(time.Minute) }}
	if mod != nil {
		mod(&h.cfg)
	}
	h.start()
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

// notify shows a and returns its message id.
func (h *harness) notify(a *gate.Approval) int {
	h.t.Helper()
	if err := h.bot.Notify(h.ctx(), a); err != nil {
		h.t.Fatalf("Notify: %v", err)
	}
	got, err := h.g.Get(h.ctx(), a.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	id, ok := ref(got, testChat)
	if !ok {
		h.t.Fatalf("no message ref recorded for %s: %+v", a.ID, got.Messages)
	}
	return id
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

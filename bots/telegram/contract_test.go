package telegram

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/bots/frontendtest"
	"approvalbot/bots/telegramtest"
	"approvalbot/gate/gatetest"
	"approvalbot/prompt"
)

// TestContract runs the frontend contract (bots/frontendtest) against the
// bot on the fake Bot API, behind a proxy that holds, drops and records
// sends.
func TestContract(t *testing.T) {
	frontendtest.Run(t, func(t *testing.T) frontendtest.Driver {
		srv := telegramtest.New(t, testToken)
		return &contractDriver{srv: srv, proxy: frontendtest.NewProxy(t, srv.URL), logs: &frontendtest.LogBuffer{}}
	})
}

type contractDriver struct {
	srv   *telegramtest.Server
	proxy *frontendtest.Proxy
	logs  *frontendtest.LogBuffer
	env   *gatetest.Env
	stop  func()
}

var contractUsers = map[frontendtest.User]tgbotapi.User{frontendtest.Approver: ana, frontendtest.Stranger: eve}

func (d *contractDriver) Name() string             { return Name }
func (d *contractDriver) Notifies() bool           { return true }
func (d *contractDriver) Skips() map[string]string { return nil }
func (d *contractDriver) Secrets() []string {
	return []string{testToken, strings.SplitN(testToken, ":", 2)[1]}
}
func (d *contractDriver) Logs() string { return d.logs.String() }

func (d *contractDriver) Start(t *testing.T, s frontendtest.Setup) {
	var approvers []int64
	for _, u := range s.Approvers {
		approvers = append(approvers, contractUsers[u].ID)
	}
	for range s.RateLimit {
		d.srv.Fail("sendMessage", telegramtest.Fault{RetryAfter: 1})
	}
	d.proxy.Drop("/sendMessage", s.Drops)
	lim := testLimits
	cfg := Config{Token: testToken, ChatID: testChat, Approvers: approvers, APIURL: d.proxy.URL,
		PollTimeout: time.Second, Limits: &lim, Now: s.Env.Clock.Now}
	logger := slog.New(slog.NewTextHandler(d.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	bot, err := New(cfg, s.Env.G, logger)
	if err != nil {
		t.Fatal(err)
	}
	s.Env.G.AddNotifier(bot)
	d.env = s.Env
	d.stop = frontendtest.Serve(t, s.Env.G, bot.Run, bot.Close)
}

func (d *contractDriver) Stop(*testing.T) { d.stop() }

func (d *contractDriver) Hold(*testing.T) (<-chan struct{}, func()) {
	return d.proxy.Hold("/sendMessage")
}

// Prompts: every prompt of id as sent, then the messages as they are now.
func (d *contractDriver) Prompts(t *testing.T, id string) []frontendtest.Prompt {
	var out []frontendtest.Prompt
	for _, ex := range d.proxy.Exchanges("/sendMessage") {
		var res struct {
			OK     bool `json:"ok"`
			Result struct {
				MessageID int `json:"message_id"`
			} `json:"result"`
		}
		p, err := url.ParseQuery(string(ex.Request))
		if err != nil || json.Unmarshal(ex.Response, &res) != nil || !res.OK {
			continue
		}
		m := telegramtest.Message{ID: res.Result.MessageID, Text: p.Get("text"), ParseMode: p.Get("parse_mode")}
		if kb := p.Get("reply_markup"); kb != "" {
			var mk tgbotapi.InlineKeyboardMarkup
			if json.Unmarshal([]byte(kb), &mk) == nil {
				m.Keyboard = mk.InlineKeyboard
			}
		}
		if v, ok := contractVersion(t, m, id); ok {
			out = append(out, v)
		}
	}
	for _, m := range d.srv.Messages(testChat) {
		if v, ok := contractVersion(t, m, id); ok {
			out = append(out, v)
		}
	}
	return out
}

// contractVersion is m as a version of the prompt of id, if it is one.
func contractVersion(t *testing.T, m telegramtest.Message, id string) (frontendtest.Prompt, bool) {
	if m.FileName != "" || m.ForceReply {
		return frontendtest.Prompt{}, false
	}
	text := plain(t, m)
	if !strings.Contains(text, "ID: "+id) {
		return frontendtest.Prompt{}, false
	}
	v := frontendtest.Prompt{Message: strconv.Itoa(m.ID), Text: text, Raw: m}
	for _, b := range m.Buttons() {
		if cb, ok := parseCallback(b[1]); ok {
			for k, op := range choiceOps {
				if op == cb.op && cb.id == id {
					v.Choices = append(v.Choices, k)
				}
			}
		}
	}
	v.Live = len(v.Choices) > 0
	return v, true
}

func (d *contractDriver) Press(t *testing.T, p frontendtest.Press) frontendtest.Answer {
	t.Helper()
	m := frontendtest.Target(t, d, p).Raw.(telegramtest.Message)
	ans := d.pressOp(t, m, choiceOps[p.Choice.Kind], p)
	if p.Choice.Kind != prompt.ChoiceAlways || ans.ShowAlert {
		return frontendtest.Answer{Text: ans.Text}
	}
	// The scope step replaces the keyboard.
	step, err := d.srv.WaitMessage(frontendtest.Context(t), testChat, func(x telegramtest.Message) bool {
		return x.ID == m.ID && hasOp(x, scopeOps[p.Choice.Scope])
	})
	if err != nil {
		t.Fatalf("no Always scope step on message %d", m.ID)
	}
	return frontendtest.Answer{Text: d.pressOp(t, step, scopeOps[p.Choice.Scope], p).Text}
}

// pressOp presses the button with op on m as p.As (its digest altered
// with p.Tamper) and waits for the answer.
func (d *contractDriver) pressOp(t *testing.T, m telegramtest.Message, op string, p frontendtest.Press) tgbotapi.CallbackConfig {
	t.Helper()
	for _, b := range m.Buttons() {
		cb, ok := parseCallback(b[1])
		if !ok || cb.op != op {
			continue
		}
		data := b[1]
		if p.Tamper {
			data = cb.op + ":" + cb.id + ":" + frontendtest.Tamper(cb.digest)
		}
		q := d.srv.Press(testChat, m.ID, contractUsers[p.As], data)
		ans, err := d.srv.WaitAnswer(frontendtest.Context(t), q)
		if err != nil {
			t.Fatalf("no answer to the press of %s: %v", data, err)
		}
		return ans
	}
	t.Fatalf("no %q button on message %d: %v", op, m.ID, m.Buttons())
	return tgbotapi.CallbackConfig{}
}

func hasOp(m telegramtest.Message, op string) bool {
	for _, b := range m.Buttons() {
		if cb, ok := parseCallback(b[1]); ok && cb.op == op {
			return true
		}
	}
	return false
}

// Full presses the prompt's Full button and returns the document it sends.
func (d *contractDriver) Full(t *testing.T, id string) string {
	t.Helper()
	m := frontendtest.Newest(t, d, id).Raw.(telegramtest.Message)
	d.pressOp(t, m, opFull, frontendtest.Press{ID: id, As: frontendtest.Approver})
	doc, err := d.srv.WaitMessage(frontendtest.Context(t), testChat, func(x telegramtest.Message) bool {
		return x.FileName == "approval-"+id+".txt"
	})
	if err != nil {
		t.Fatalf("no full-content document for %s", id)
	}
	return string(doc.Document)
}

// TestRunStoppedWhileStarting: Run returns nil when ctx ends, also before
// it has loaded its offset (the contract's restarts stop it that early).
func TestRunStoppedWhileStarting(t *testing.T) {
	env := gatetest.New(t, gatetest.Options{})
	srv := telegramtest.New(t, testToken)
	bot, err := New(Config{Token: testToken, ChatID: testChat, APIURL: srv.URL}, env.G, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := bot.Run(ctx); err != nil {
		t.Errorf("Run after ctx ended: %v", err)
	}
}

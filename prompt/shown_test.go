package prompt

import (
	"errors"
	"strings"
	"testing"
	"time"

	"approvalbot/gate"
)

func TestShown(t *testing.T) {
	p1 := &gate.Approval{ID: "p1", Status: gate.StatusPending, Digest: strings.Repeat("a", 64)}
	d := &gate.Approval{ID: "d1", Status: gate.StatusApproved, Digest: strings.Repeat("b", 64)}
	p2 := &gate.Approval{ID: "p2", Status: gate.StatusPending, Digest: strings.Repeat("c", 64)}
	b := &gate.Batch{ID: "bt", Members: []gate.BatchMember{{ID: "p1", Digest: p1.Digest}, {ID: "p2", Digest: p2.Digest}}}
	s := ShownOf(gate.View{Approval: p1, Items: []*gate.Approval{p1, d, p2}, Batch: b})
	if strings.Join(s.IDs, " ") != "p1 p2 d1" || s.Pending != 2 || s.Digests[0] != DigestPrefix(p1) || s.Batch != "bt" ||
		s.BDigest != b.Digest() || !s.BatchReply() {
		t.Fatalf("shown %+v", s)
	}
	got, ok := DecodeShown(s.Encode())
	if !ok || strings.Join(got.IDs, " ") != "p1 p2 d1" || got.BDigest != s.BDigest {
		t.Fatalf("round trip %+v %v", got, ok)
	}
	for _, raw := range []string{"", "{}", `{"ids":["x"]}`, "not json"} {
		if _, ok := DecodeShown(raw); ok {
			t.Errorf("DecodeShown(%q) ok", raw)
		}
	}
	if one := ShownOf(gate.View{Approval: p1}); one.BatchReply() || len(one.IDs) != 1 {
		t.Fatalf("single %+v", one)
	}
}

func TestReplyDecision(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		text     string
		want     gate.Decision
		askScope bool
	}{
		{"yes", gate.Decision{Approve: true}, false},
		{"always", gate.Decision{}, true},
		{"always for this session", gate.Decision{Approve: true, Always: true, Scope: gate.ScopeSession}, false},
		{"no, use make", gate.Decision{Reason: "use make"}, false},
		{"deny: not now", gate.Decision{Reason: "not now"}, false},
		{"stop", gate.Decision{Stop: true, Reason: "stopped by ana"}, false},
		{"stop: enough", gate.Decision{Stop: true, Reason: "enough"}, false},
	} {
		d, ask := ReplyDecision(ParseReply(tt.text), "ana", now)
		if ask != tt.askScope || d.Approve != tt.want.Approve || d.Always != tt.want.Always || d.Scope != tt.want.Scope ||
			d.Stop != tt.want.Stop || d.Reason != tt.want.Reason {
			t.Errorf("%q: %+v ask %v, want %+v ask %v", tt.text, d, ask, tt.want, tt.askScope)
		}
	}
	if d, _ := ReplyDecision(ParseReply("always 1h"), "ana", now); d.ExpiresAt == nil || !d.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Errorf("always 1h: %+v", d)
	}
	if d := ReplyBatchDecision(ParseReply("stop, enough")); !d.Stop || d.Approve || d.Reason != "enough" {
		t.Errorf("batch stop: %+v", d)
	}
	a := &gate.Approval{ID: "a", Status: gate.StatusDenied, DecidedBy: "bob", Via: "cli"}
	for _, tt := range []struct {
		err    error
		prefix string
		failed bool
	}{
		{nil, "Denied by bob", false},
		{gate.ErrAlreadyDecided, "Already decided: Denied by bob", false},
		{gate.ErrDigestMismatch, ReplyMismatch, false},
		{errors.New("disk full"), ReplyFailed, true},
	} {
		if text, failed := ReplyDecided(a, tt.err); !strings.HasPrefix(text, tt.prefix) || failed != tt.failed {
			t.Errorf("%v: %q %v", tt.err, text, failed)
		}
	}
	if got := AlreadyDecided([]*gate.Approval{a, a}); !strings.HasPrefix(got, "Already decided:\nDenied by bob") {
		t.Errorf("AlreadyDecided: %q", got)
	}
}

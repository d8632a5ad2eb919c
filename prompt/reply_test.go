package prompt

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"approvalbot/gate"
)

func TestParseReply(t *testing.T) {
	cases := []struct {
		in     string
		kind   ReplyKind
		reason string
		scope  string
	}{
		{"yes", ReplyApprove, "", ""},
		{"Yes", ReplyApprove, "", ""},
		{"YES!", ReplyApprove, "", ""},
		{"  ok  ", ReplyApprove, "", ""},
		{"OK.", ReplyApprove, "", ""},
		{"okay", ReplyApprove, "", ""},
		{"approve", ReplyApprove, "", ""},
		{"Approved", ReplyApprove, "", ""},
		{"lgtm", ReplyApprove, "", ""},
		{"LGTM!", ReplyApprove, "", ""},
		{"👍", ReplyApprove, "", ""},
		{"👍🏽", ReplyApprove, "", ""},
		{"✅", ReplyApprove, "", ""},
		{"go ahead", ReplyApprove, "", ""},
		{"go   ahead", ReplyApprove, "", ""},
		{"ship it", ReplyApprove, "", ""},
		{"y", ReplyApprove, "", ""},
		{"yep", ReplyApprove, "", ""},
		{"always", ReplyAlways, "", ""},
		{"Always!", ReplyAlways, "", ""},
		{"always allow", ReplyAlways, "", ""},
		{"always for this session", ReplyAlways, "", ScopeKeySession},
		{"always session", ReplyAlways, "", ScopeKeySession},
		{"always, today", ReplyAlways, "", ScopeKeyToday},
		{"always 1h", ReplyAlways, "", ScopeKeyHour},
		{"always for an hour", ReplyAlways, "", ScopeKeyHour},
		{"always forever", ReplyAlways, "", ScopeKeyAgent},
		{"always maybe", ReplyUnclear, "", ""},
		{"no", ReplyDeny, "", ""},
		{"No.", ReplyDeny, "", ""},
		{"nope", ReplyDeny, "", ""},
		{"deny", ReplyDeny, "", ""},
		{"deny: use make instead", ReplyDeny, "use make instead", ""},
		{"Deny:use make instead", ReplyDeny, "use make instead", ""},
		{"no, run the tests first", ReplyDeny, "run the tests first", ""},
		{"No - not on main", ReplyDeny, "not on main", ""},
		{"no because it deletes the cache", ReplyDeny, "it deletes the cache", ""},
		{"deny use make", ReplyDeny, "use make", ""},
		{"👎", ReplyDeny, "", ""},
		{"👎 too risky", ReplyDeny, "too risky", ""},
		{"don't", ReplyDeny, "", ""},
		{"reject: wrong branch", ReplyDeny, "wrong branch", ""},
		{"stop", ReplyStop, "", ""},
		{"STOP!", ReplyStop, "", ""},
		{"stop: you are looping", ReplyStop, "you are looping", ""},
		{"🛑", ReplyStop, "", ""},
		{"halt", ReplyStop, "", ""},
		{"yes but use make", ReplyUnclear, "", ""},
		{"ok, and then push", ReplyUnclear, "", ""},
		{"yesterday", ReplyUnclear, "", ""},
		{"noted", ReplyUnclear, "", ""},
		{"nothing", ReplyUnclear, "", ""},
		{"stopwatch", ReplyUnclear, "", ""},
		{"okie dokie", ReplyUnclear, "", ""},
		{"what does this do?", ReplyUnclear, "", ""},
		{"", ReplyUnclear, "", ""},
		{"   ", ReplyUnclear, "", ""},
		{"approve all of them and rm -rf /", ReplyUnclear, "", ""},
		{"y e s", ReplyUnclear, "", ""},
		{"yes\u200b", ReplyUnclear, "", ""},
	}
	for _, c := range cases {
		got := ParseReply(c.in)
		if got.Kind != c.kind || got.Reason != c.reason || got.Scope != c.scope {
			t.Errorf("ParseReply(%q) = %+v, want kind %q reason %q scope %q", c.in, got, c.kind, c.reason, c.scope)
		}
	}
	if len(cases) < 40 {
		t.Fatalf("only %d phrasings", len(cases))
	}
}

// FuzzParseReply: the parser never panics, is deterministic, approves
// only an exact approval phrase, and a reason is one visible line.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"yes", "no, use make", "always today", "stop: x", "👍🏻", "deny:\n\x00", "ok ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := ParseReply(s)
		if r != ParseReply(s) {
			t.Fatalf("not deterministic: %q", s)
		}
		if r.Kind == ReplyApprove && !approveWords[strings.TrimRight(normalizeReply(strings.TrimSpace(s)), ".!")] {
			t.Fatalf("%q approves but is no approval phrase", s)
		}
		if r.Kind == ReplyAlways {
			if _, ok := ScopeChoiceOf(r.Scope); r.Scope != "" && !ok {
				t.Fatalf("%q: unknown scope %q", s, r.Scope)
			}
		}
		if r.Reason != "" && (strings.ContainsAny(r.Reason, "\n\r\x00") || !utf8.ValidString(r.Reason)) {
			t.Fatalf("%q: reason %q is not one clean line", s, r.Reason)
		}
		if (r.Kind == ReplyApprove || r.Kind == ReplyAlways || r.Kind == ReplyUnclear) && r.Reason != "" {
			t.Fatalf("%q: a reason on %q", s, r.Kind)
		}
	})
}

func TestScopeChoices(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	want := map[string]*time.Time{}
	hour, midnight := now.Add(time.Hour), time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	want[ScopeKeyHour], want[ScopeKeyToday], want[ScopeKeyAgent], want[ScopeKeySession] = &hour, &midnight, nil, nil
	for _, s := range AlwaysChoices {
		d := AlwaysDecision(s, now)
		w := want[s.Key]
		if (w == nil) != (d.ExpiresAt == nil) || w != nil && !w.Equal(*d.ExpiresAt) || !d.Always || d.Scope != s.Scope {
			t.Errorf("%s: %+v, want expiry %v", s.Key, d, w)
		}
	}
	r := gate.AlwaysRule{Scope: gate.ScopeAgent, ExpiresAt: &hour}
	if got := RuleLifetime(r, now.Add(18*time.Minute)); got != "expires in 42m0s" {
		t.Errorf("lifetime %q", got)
	}
	if got := RuleLifetime(r, hour); got != "expired" {
		t.Errorf("lifetime at expiry %q", got)
	}
	if got := RuleLifetime(gate.AlwaysRule{Scope: gate.ScopeAgent}, now); got != "no expiry" {
		t.Errorf("lifetime %q", got)
	}
}

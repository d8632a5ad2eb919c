package prompt

import (
	"strings"
	"time"

	"approvalbot/gate"
)

// TimeFormat is how prompts write a clock time.
const TimeFormat = "2006-01-02 15:04:05 UTC"

// DigestLen is how many hex digits of the call's digest a button carries:
// enough to bind a press to the exact call it showed (the gate accepts a
// prefix of 8 or more). Every frontend uses the same length.
const DigestLen = 16

// minDigest is the shortest prefix the gate accepts (gate.Decide).
const minDigest = 8

// DigestPrefix is the part of a's digest a button carries.
func DigestPrefix(a *gate.Approval) string {
	if len(a.Digest) > DigestLen {
		return a.Digest[:DigestLen]
	}
	return a.Digest
}

// DigestMatches reports whether a button's digest prefix was made for a's
// call. Older buttons carry shorter prefixes; any of at least 8 digits
// counts, as it does for the gate.
func DigestMatches(a *gate.Approval, pressed string) bool {
	return len(pressed) >= minDigest && strings.HasPrefix(a.Digest, pressed)
}

// ChoiceKind is one thing a person can do with a pending prompt.
type ChoiceKind string

// The choices every frontend offers, in display order.
const (
	ChoiceApprove    ChoiceKind = "approve"
	ChoiceAlways     ChoiceKind = "always" // then a scope: AlwaysChoices
	ChoiceDeny       ChoiceKind = "deny"
	ChoiceDenyReason ChoiceKind = "deny_reason"
	ChoiceStop       ChoiceKind = "stop"
)

// Choice is one button (or key) of a pending prompt.
type Choice struct {
	Kind  ChoiceKind
	Label string
}

// Choices are the choices of a's prompt, in display order: Always only
// when the gate proposed a pattern for it.
func Choices(a *gate.Approval, c Content) []Choice {
	out := []Choice{{ChoiceApprove, "Approve"}}
	if len(a.Evaluation.AlwaysRules) > 0 && len(c.Always) > 0 {
		out = append(out, Choice{ChoiceAlways, "Always: " + strings.Join(c.Always, ", ")})
	}
	return append(out, Choice{ChoiceDeny, "Deny"}, Choice{ChoiceDenyReason, "Deny with reason"},
		Choice{ChoiceStop, "Stop"})
}

// Keys of the Always scope choices, as buttons, replies and the API's
// clients name them.
const (
	ScopeKeySession = "session" // until the agent's session ends
	ScopeKeyHour    = "hour"    // this agent, for one hour
	ScopeKeyToday   = "today"   // this agent, until the end of the day
	ScopeKeyAgent   = "agent"   // this agent, no expiry
)

// ScopeChoice is one answer to "Always, for how long?": a scope and an
// expiry (DESIGN.md, Rules: chosen on the button's confirmation step).
type ScopeChoice struct {
	Key   string
	Scope gate.Scope
	Label string
	For   time.Duration // expires this long after the choice (0: see Today)
	Today bool          // expires at the end of the day, the daemon's time zone
}

// AlwaysChoices are the scopes Always offers, with an expiry, in display
// order, on every frontend.
var AlwaysChoices = []ScopeChoice{
	{Key: ScopeKeySession, Scope: gate.ScopeSession, Label: "This session"},
	{Key: ScopeKeyHour, Scope: gate.ScopeAgent, Label: "This agent, 1 hour", For: time.Hour},
	{Key: ScopeKeyToday, Scope: gate.ScopeAgent, Label: "This agent, today", Today: true},
	{Key: ScopeKeyAgent, Scope: gate.ScopeAgent, Label: "This agent, no expiry"},
}

// ScopeChoiceOf returns the Always choice with key.
func ScopeChoiceOf(key string) (ScopeChoice, bool) {
	for _, s := range AlwaysChoices {
		if s.Key == key {
			return s, true
		}
	}
	return ScopeChoice{}, false
}

// ExpiresAt is when an Always rule chosen with s at now expires; nil: never.
func (s ScopeChoice) ExpiresAt(now time.Time) *time.Time {
	switch {
	case s.For > 0:
		t := now.Add(s.For)
		return &t
	case s.Today:
		y, m, d := now.Date()
		t := time.Date(y, m, d+1, 0, 0, 0, 0, now.Location())
		return &t
	}
	return nil
}

// AlwaysDecision is the gate decision of Always with scope choice s at now.
func AlwaysDecision(s ScopeChoice, now time.Time) gate.Decision {
	return gate.Decision{Approve: true, Always: true, Scope: s.Scope, ExpiresAt: s.ExpiresAt(now)}
}

// RuleLifetime says how long an Always rule lasts, at now: "session s1",
// "expires in 42m", "no expiry", "expired".
func RuleLifetime(r gate.AlwaysRule, now time.Time) string {
	var parts []string
	if r.Scope == gate.ScopeSession {
		parts = append(parts, "session "+VisibleLine(r.SessionID))
	}
	switch {
	case r.ExpiresAt == nil && r.Scope != gate.ScopeSession:
		parts = append(parts, "no expiry")
	case r.ExpiresAt == nil:
	case !now.Before(*r.ExpiresAt):
		parts = append(parts, "expired")
	default:
		parts = append(parts, "expires in "+r.ExpiresAt.Sub(now).Round(time.Minute).String())
		if left := r.ExpiresAt.Sub(now); left < time.Minute {
			parts[len(parts)-1] = "expires in " + left.Round(time.Second).String()
		}
	}
	return strings.Join(parts, ", ")
}

// ScopeQuestion is the confirmation step's question.
func ScopeQuestion(c Content) string {
	return "Always allow " + strings.Join(c.Always, ", ") + "? Choose for how long."
}

// Decision is the gate decision a choice makes (scope for Always, reason
// for a deny), before the frontend fills By, Via and Digest.
func Decision(k ChoiceKind, scope gate.Scope, reason string) gate.Decision {
	switch k {
	case ChoiceApprove:
		return gate.Decision{Approve: true}
	case ChoiceAlways:
		return gate.Decision{Approve: true, Always: true, Scope: scope}
	case ChoiceStop:
		return gate.Decision{Stop: true, Reason: reason}
	}
	return gate.Decision{Reason: reason}
}

// Headline is a prompt's heading for status s: what is asked, or how it ended.
func Headline(s gate.Status) string {
	switch s {
	case gate.StatusPending, "":
		return "Approval needed"
	case gate.StatusApproved, gate.StatusAllowed:
		return "Approved"
	case gate.StatusApprovedAlways:
		return "Approved always"
	case gate.StatusDenied:
		return "Denied"
	case gate.StatusDeniedStop:
		return "Denied and stopped"
	case gate.StatusExpired:
		return "Expired"
	case gate.StatusCancelled:
		return "Cancelled"
	}
	return "Closed (" + string(s) + ")"
}

// Icon is the emoji frontends put before a status.
func Icon(s gate.Status) string {
	switch s {
	case gate.StatusPending, "":
		return "🔐"
	case gate.StatusApproved, gate.StatusApprovedAlways, gate.StatusAllowed:
		return "✅"
	case gate.StatusDenied, gate.StatusDeniedStop:
		return "❌"
	case gate.StatusExpired:
		return "⌛"
	case gate.StatusCancelled:
		return "🚫"
	}
	return "ℹ️"
}

// Good reports whether s let the call run.
func Good(s gate.Status) bool {
	return s == gate.StatusApproved || s == gate.StatusApprovedAlways || s == gate.StatusAllowed
}

// RestartNote is the line a prompt re-shown after a restart carries.
func RestartNote(restarted time.Time) string {
	return "Still waiting (approvalbot restarted at " + restarted.UTC().Format(TimeFormat) + ")"
}

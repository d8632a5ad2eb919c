package gate

import "strings"

// Who or what made a decision an audit entry records (AuditEntry.Decider).
const (
	DeciderPerson  = "person"  // an approver (button, reply, CLI, API, web)
	DeciderRule    = "rule"    // a rule of the rules file (or the built-in ones)
	DeciderAlways  = "always"  // an Always rule a person added
	DeciderMode    = "mode"    // the agent's mode (strict, approve_all)
	DeciderMemory  = "memory"  // denial memory: the same call was just denied
	DeciderTimeout = "timeout" // nobody decided before the deadline
	DeciderAgent   = "agent"   // the agent went away
	DeciderExpiry  = "expiry"  // an Always rule expired
)

// Decider says what made the decision e records, and which one: a person
// (by name), a rule (file:line and pattern), an Always rule (its
// pattern), a mode (its name), denial memory, the deadline or the agent.
// "" for entries that record no decision (pending, conflicts).
func (e AuditEntry) Decider() (kind, which string) {
	switch e.Event {
	case "evaluated":
		switch {
		case e.By != "":
			return DeciderMemory, "earlier denial by " + e.By
		case strings.HasPrefix(e.Detail, "strict mode:"):
			return DeciderMode, "strict"
		case strings.HasPrefix(e.Detail, "approve_all mode:"):
			return DeciderMode, "approve_all"
		}
		if p, ok := alwaysIn(e.Detail); ok {
			return DeciderAlways, p
		}
		return DeciderRule, ruleIn(e.Detail)
	case "decided":
		switch {
		case e.Status == StatusExpired:
			return DeciderTimeout, ""
		case e.Status == StatusCancelled:
			return DeciderAgent, ""
		case strings.Contains(e.By, "(mode "):
			return DeciderMode, strings.TrimSuffix(e.By[strings.Index(e.By, "(mode ")+6:], ")")
		}
		if p, ok := alwaysIn(e.Detail); ok && e.Status != StatusApprovedAlways {
			return DeciderAlways, p // resolved by an Always rule added meanwhile
		}
		return DeciderPerson, e.By
	case "rule_added", "rule_removed", "mode":
		return DeciderPerson, e.By
	case "rule_expired":
		return DeciderExpiry, ""
	}
	return "", ""
}

// alwaysIn finds "an Always rule (Tool: pattern)" in a reason.
func alwaysIn(reason string) (string, bool) {
	const mark = "an Always rule ("
	i := strings.Index(reason, mark)
	if i < 0 {
		return "", false
	}
	rest := reason[i+len(mark):]
	if j := strings.LastIndex(rest, ")"); j >= 0 {
		rest = rest[:j]
	}
	return rest, true
}

// ruleIn finds the rule a reason names ("allowed by rules.jsonc:3 Bash: ls *").
func ruleIn(reason string) string {
	for _, verb := range []string{"denied by ", "allowed by "} {
		if i := strings.Index(reason, verb); i >= 0 {
			r := reason[i+len(verb):]
			if j := strings.Index(r, " (as "); j >= 0 {
				r = r[:j]
			}
			return r
		}
	}
	return reason
}

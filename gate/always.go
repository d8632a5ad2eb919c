package gate

import (
	"fmt"
	"time"
)

// AlwaysSet is a compiled set of Always rules (normally one agent's). It is
// immutable and safe for concurrent use.
type AlwaysSet struct {
	rules []alwaysRule
}

type alwaysRule struct {
	r       AlwaysRule
	tool    matcher
	pattern matcher
}

// CompileAlways compiles always rules. It skips nothing silently: a rule
// with an empty or malformed tool or pattern, or an unknown scope, is an
// error naming it.
func CompileAlways(rules []AlwaysRule) (*AlwaysSet, error) {
	s := &AlwaysSet{rules: make([]alwaysRule, 0, len(rules))}
	for _, r := range rules {
		if r.Scope != ScopeSession && r.Scope != ScopeAgent {
			return nil, fmt.Errorf("always rule %s: unknown scope %q", r.ID, r.Scope)
		}
		tm, err := compileTool(r.Tool)
		if err != nil {
			return nil, fmt.Errorf("always rule %s: tool %q: %w", r.ID, r.Tool, err)
		}
		// Always patterns are saved absolute: no home to expand.
		pm, err := compilePattern(r.Pattern, "")
		if err != nil {
			return nil, fmt.Errorf("always rule %s: pattern %q: %w", r.ID, r.Pattern, err)
		}
		s.rules = append(s.rules, alwaysRule{r: r, tool: tm, pattern: pm})
	}
	return s, nil
}

// Len returns the number of rules in the set.
func (s *AlwaysSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.rules)
}

// match returns the first rule that applies to the call's agent and session
// at now, to tool, and matches subj; nil if none.
func (s *AlwaysSet) match(c *Call, tool string, subj *subject, now time.Time) *AlwaysRule {
	if s == nil {
		return nil
	}
	for i := range s.rules {
		ar := &s.rules[i]
		if ar.r.Agent != "" && ar.r.Agent != c.Agent {
			continue
		}
		// A session rule without a session would otherwise cover every
		// call that has none.
		if ar.r.Scope == ScopeSession && ar.r.SessionID == "" {
			continue
		}
		if !ar.r.Active(now, c.SessionID) || !ar.tool.match(tool) {
			continue
		}
		if subj.path != nil {
			if ar.pattern.matchPath(subj.path) {
				return &ar.r
			}
		} else if ar.pattern.match(subj.text) {
			return &ar.r
		}
	}
	return nil
}

package gate

import "time"

// TEMPORARY: the rules helper replaces this file with rules.go/evaluate.go.

// Policy is a compiled rules file.
type Policy struct{}

// Env is what an evaluation depends on besides the call and the policy.
type Env struct {
	Mode   Mode
	Always *AlwaysSet
	Now    time.Time
}

// AlwaysSet is a compiled set of one agent's Always rules.
type AlwaysSet struct{}

// CompileAlways compiles always rules.
func CompileAlways(rules []AlwaysRule) (*AlwaysSet, error) { return &AlwaysSet{}, nil }

// Evaluate decides a call.
func (p *Policy) Evaluate(c Call, env Env) Evaluation {
	return Evaluation{Decision: Ask, Reason: "stub"}
}

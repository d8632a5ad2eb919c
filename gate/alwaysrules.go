package gate

import (
	"context"
	"errors"
	"fmt"
)

// Rules lists Always rules of agent ("" for all).
func (g *Gate) Rules(ctx context.Context, agent string) ([]AlwaysRule, error) {
	rs, err := g.store.ListRules(ctx, agent)
	if err != nil {
		return nil, fmt.Errorf("list always rules: %w", err)
	}
	return rs, nil
}

// AddRule validates and stores an Always rule (assigning its ID and
// CreatedAt), then resolves the agent's pending approvals that now allow.
func (g *Gate) AddRule(ctx context.Context, r AlwaysRule) (AlwaysRule, error) {
	return g.addRule(ctx, r, true)
}

func (g *Gate) addRule(ctx context.Context, r AlwaysRule, cascade bool) (AlwaysRule, error) {
	switch {
	case r.Agent == "" || len(r.Agent) > maxAgentLen:
		return r, fmt.Errorf("%w: rule needs an agent", ErrInvalid)
	case r.Tool == "" || len(r.Tool) > maxToolLen:
		return r, fmt.Errorf("%w: rule needs a tool", ErrInvalid)
	case r.Pattern == "" || len(r.Pattern) > maxCwdLen:
		return r, fmt.Errorf("%w: rule needs a pattern", ErrInvalid)
	}
	switch r.Scope {
	case "":
		r.Scope = ScopeAgent
	case ScopeAgent:
	case ScopeSession:
		if r.SessionID == "" {
			return r, fmt.Errorf("%w: a session rule needs a session id", ErrInvalid)
		}
	default:
		return r, fmt.Errorf("%w: unknown scope %q", ErrInvalid, r.Scope)
	}
	r.ID = newID()
	r.CreatedAt = g.now()
	// Compile before storing: a rule that cannot match would be kept forever
	// and fail every evaluation of the agent.
	if _, err := CompileAlways([]AlwaysRule{r}); err != nil {
		return r, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	err := g.store.AddRule(ctx, r, AuditEntry{Event: "rule_added", Time: r.CreatedAt, ApprovalID: r.ApprovalID,
		Agent: r.Agent, Tool: r.Tool, By: r.CreatedBy, Detail: string(r.Scope) + " " + r.Pattern})
	if err != nil {
		return r, fmt.Errorf("store always rule: %w", err)
	}
	g.forgetAlways(r.Agent)
	if cascade {
		by := r.CreatedBy
		if by == "" {
			by = "rules"
		}
		g.cascade(ctx, r.Agent, by, "always-rule")
	}
	return r, nil
}

// RemoveRule deletes an Always rule, or ErrNotFound. by is the approver who
// removed it, as the audit log records it; only approvers may call it.
func (g *Gate) RemoveRule(ctx context.Context, id, by string) (AlwaysRule, error) {
	if err := validID(id); err != nil {
		return AlwaysRule{}, err
	}
	r, err := g.store.DeleteRule(ctx, id)
	if err != nil {
		return r, fmt.Errorf("delete always rule %s: %w", id, err)
	}
	g.forgetAlways(r.Agent)
	_ = g.audit(ctx, AuditEntry{Event: "rule_removed", Agent: r.Agent, Tool: r.Tool, By: by,
		Detail: string(r.Scope) + " " + r.Pattern})
	return r, nil
}

func (g *Gate) forgetAlways(agent string) {
	g.mu.Lock()
	delete(g.always, agent)
	g.mu.Unlock()
}

// alwaysSet returns the agent's compiled Always rules, cached until they change.
func (g *Gate) alwaysSet(ctx context.Context, agent string) (*AlwaysSet, error) {
	g.mu.Lock()
	set, ok := g.always[agent]
	g.mu.Unlock()
	if ok {
		return set, nil
	}
	rules, err := g.store.ListRules(ctx, agent)
	if err != nil {
		return nil, fmt.Errorf("load always rules of %s: %w", agent, err)
	}
	set, err = CompileAlways(rules)
	if err != nil {
		return nil, fmt.Errorf("compile always rules of %s: %w", agent, err)
	}
	g.mu.Lock()
	g.always[agent] = set
	g.mu.Unlock()
	return set, nil
}

// SetMode sets an agent's mode and resolves the agent's pending approvals
// the new mode decides (strict denies them, approve_all allows them). by is
// the approver who changed it, as the audit log and the resolved approvals
// record it; only approvers may call it.
func (g *Gate) SetMode(ctx context.Context, agent string, m Mode, by string) error {
	if agent == "" || len(agent) > maxAgentLen {
		return fmt.Errorf("%w: mode needs an agent", ErrInvalid)
	}
	if !m.Valid() {
		return fmt.Errorf("%w: unknown mode %q (interactive, strict, approve_all)", ErrInvalid, m)
	}
	err := g.store.SetMode(ctx, agent, m, AuditEntry{Event: "mode", Time: g.now(), Agent: agent, By: by, Detail: string(m)})
	if err != nil {
		return fmt.Errorf("store mode of %s: %w", agent, err)
	}
	g.mu.Lock()
	g.modes[agent] = m
	g.mu.Unlock()
	if m != ModeInteractive {
		g.cascade(ctx, agent, by+" (mode "+string(m)+")", "mode")
	}
	return nil
}

// Mode returns an agent's mode (interactive when never set).
func (g *Gate) Mode(ctx context.Context, agent string) (Mode, error) {
	g.mu.Lock()
	m, ok := g.modes[agent]
	g.mu.Unlock()
	if ok {
		return m, nil
	}
	m, err := g.store.GetMode(ctx, agent)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return ModeInteractive, fmt.Errorf("get mode of %s: %w", agent, err)
	}
	if m == "" {
		m = ModeInteractive
	}
	g.mu.Lock()
	g.modes[agent] = m
	g.mu.Unlock()
	return m, nil
}

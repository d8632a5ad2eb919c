package main

import (
	"context"
	"errors"
	"fmt"

	"approvalbot/api"
	"approvalbot/gate"
	"approvalbot/prompt"
)

// runApprove is `approvalbot approve ID [--always] [--scope session|agent] [--by NAME]`
// or `approvalbot approve --session S [--agent A] [--by NAME]`.
func runApprove(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "approve", "approve ID [--always] [--scope session|agent] [--by NAME] | approve --session S [--agent A]")
	always := fs.Bool("always", false, "also save the approval's Always pattern(s)")
	scope := fs.String("scope", "", "with --always: session (until the agent's session ends) or agent (default, persistent)")
	by := fs.String("by", defaultBy(e), "who approves, as recorded")
	session := fs.String("session", "", "approve every call of this agent session pending now (each bound to what it is now)")
	agent := fs.String("agent", "", "with --session: only this agent's calls")
	npos := 1
	if hasFlag(args, "session") {
		npos = 0
	}
	pos, code, ok := parseFlags(e, fs, args, npos)
	if !ok {
		return code
	}
	if *session != "" {
		if *always || *scope != "" {
			fmt.Fprintln(e.stderr, "approvalbot approve: --always is per call; approve the session once, or each call with --always")
			return exitUsage
		}
		return decideSession(ctx, e, "approve", *session, *agent, true, "", false, *by)
	}
	switch gate.Scope(*scope) {
	case "", gate.ScopeAgent, gate.ScopeSession:
	default:
		fmt.Fprintf(e.stderr, "approvalbot approve: bad --scope %q: want session or agent\n", *scope)
		return exitUsage
	}
	if *scope != "" && !*always {
		fmt.Fprintln(e.stderr, "approvalbot approve: --scope only goes with --always")
		return exitUsage
	}
	c := approverClientFromEnv(e)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	a, err := c.Approve(ctx, pos[0], *always, gate.Scope(*scope), *by)
	if err != nil {
		return decisionFailed(e, "approve", c, err)
	}
	printDecided(e, a)
	return exitOK
}

// decisionFailed explains a refused decision; "already decided" says by whom.
func decisionFailed(e *env, name string, c *api.Client, err error) int {
	var ae *api.Error
	if errors.Is(err, gate.ErrAlreadyDecided) && errors.As(err, &ae) && ae.Approval != nil {
		fmt.Fprintf(e.stderr, "approvalbot %s: %s was already decided: %s\n", name,
			prompt.VisibleLine(ae.Approval.ID), prompt.VisibleLine(prompt.Outcome(ae.Approval)))
		return exitFailure
	}
	if errors.Is(err, gate.ErrNotFound) {
		fmt.Fprintf(e.stderr, "approvalbot %s: no such approval (see `approvalbot pending`)\n", name)
		return exitFailure
	}
	return clientFailed(e, name, c, err)
}

func printDecided(e *env, a *gate.Approval) {
	fmt.Fprintf(e.stdout, "%s: %s\n", prompt.VisibleLine(a.ID), prompt.VisibleLine(prompt.Outcome(a)))
	if a.Status == gate.StatusApprovedAlways {
		for _, p := range a.Evaluation.AlwaysRules {
			fmt.Fprintf(e.stdout, "  always: %s %s\n", prompt.VisibleLine(p.Tool), prompt.VisibleLine(p.Pattern))
		}
	}
	if r := prompt.ResumeCommand(a); r != "" {
		fmt.Fprintf(e.stdout, "  the agent's run paused for this call; resume it with: %s\n", prompt.VisibleLine(r))
	}
}

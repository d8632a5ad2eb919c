package main

import (
	"context"
	"fmt"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// decideSession is `approve --session S` and `deny --session S`: it
// decides every call of session S pending now, each bound to the digest
// it was listed with (a call that arrives meanwhile is not decided), and
// prints what happened to each. agent narrows S to one agent's session.
func decideSession(ctx context.Context, e *env, name, session, agent string, approve bool, reason string, stop bool, by string) int {
	c := approverClientFromEnv(e)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	list, err := c.List(ctx, gate.StatusPending)
	if err != nil {
		return clientFailed(e, name, c, err)
	}
	var calls []gate.BatchMember
	agents := map[string]bool{}
	for _, a := range list {
		if a.SessionID == session && (agent == "" || a.Agent == agent) {
			calls = append(calls, gate.BatchMember{ID: a.ID, Digest: a.Digest})
			agents[a.Agent] = true
		}
	}
	if len(calls) == 0 {
		fmt.Fprintf(e.stderr, "approvalbot %s: nothing pending in session %s\n", name, prompt.VisibleLine(session))
		return exitFailure
	}
	if len(agents) > 1 {
		fmt.Fprintf(e.stderr, "approvalbot %s: session %s has calls of %d agents; name one with --agent\n",
			name, prompt.VisibleLine(session), len(agents))
		return exitUsage
	}
	rs, err := c.DecideBatch(ctx, calls, approve, reason, stop, by)
	if err != nil {
		return clientFailed(e, name, c, err)
	}
	return printBatch(e, approve, rs)
}

// printBatch prints a batch's results, a line per call and a summary; it
// fails unless every call was decided by this batch.
func printBatch(e *env, approve bool, rs []gate.BatchResult) int {
	code := exitOK
	for _, r := range rs {
		switch {
		case r.Approval != nil:
			fmt.Fprintf(e.stdout, "%s: %s: %s\n", prompt.VisibleLine(r.ID), r.Result, prompt.VisibleLine(prompt.Outcome(r.Approval)))
		default:
			fmt.Fprintf(e.stdout, "%s: %s %s\n", prompt.VisibleLine(r.ID), r.Result, prompt.VisibleLine(r.Error))
		}
		if r.Result != gate.BatchDecided {
			code = exitFailure
		}
	}
	fmt.Fprintln(e.stdout, prompt.BatchOutcome(approve, rs))
	return code
}

// hasFlag reports whether args set flag name (-name, --name, with =value or not).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, p := range []string{"-" + name, "--" + name} {
			if a == p || len(a) > len(p) && a[:len(p)+1] == p+"=" {
				return true
			}
		}
	}
	return false
}

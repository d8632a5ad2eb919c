package main

import "context"

// runDeny is `approvalbot deny ID [--reason R] [--stop] [--by NAME]`
// or `approvalbot deny --session S [--agent A] [--reason R] [--stop]`.
func runDeny(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "deny", "deny ID [--reason R] [--stop] [--by NAME] | deny --session S [--agent A] [--reason R] [--stop]")
	reason := fs.String("reason", "", "why, returned to the agent")
	stop := fs.Bool("stop", false, "also ask the agent to stop its turn")
	by := fs.String("by", defaultBy(e), "who denies, as recorded")
	session := fs.String("session", "", "deny every call of this agent session pending now")
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
		return decideSession(ctx, e, "deny", *session, *agent, false, *reason, *stop, *by)
	}
	c := approverClientFromEnv(e)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	a, err := c.Deny(ctx, pos[0], *reason, *stop, *by)
	if err != nil {
		return decisionFailed(e, "deny", c, err)
	}
	printDecided(e, a)
	return exitOK
}

package main

import "context"

// runDeny is `approvalbot deny ID [--reason R] [--stop] [--by NAME]`.
func runDeny(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "deny", "deny ID [--reason R] [--stop] [--by NAME]")
	reason := fs.String("reason", "", "why, returned to the agent")
	stop := fs.Bool("stop", false, "also ask the agent to stop its turn")
	by := fs.String("by", defaultBy(e), "who denies, as recorded")
	pos, code, ok := parseFlags(e, fs, args, 1)
	if !ok {
		return code
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

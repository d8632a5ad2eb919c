package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"approvalbot/gate"
)

const rulesUsage = `rules list [--agent NAME] [--json]
       approvalbot rules add --agent NAME --tool TOOL --pattern GLOB [--scope agent|session --session ID] [--expires DURATION]
       approvalbot rules rm ID
       approvalbot rules lint [FILE] [--json]`

// runRules is `approvalbot rules list|add|rm`: the Always rules.
func runRules(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprintf(e.stderr, "usage: approvalbot %s\n", rulesUsage)
		return exitUsage
	}
	switch args[0] {
	case "list", "ls":
		return rulesList(ctx, e, args[1:])
	case "add":
		return rulesAdd(ctx, e, args[1:])
	case "rm", "remove", "delete":
		return rulesRemove(ctx, e, args[1:])
	case "lint":
		return rulesLint(ctx, e, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintf(e.stdout, "usage: approvalbot %s\n", rulesUsage)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "approvalbot rules: unknown subcommand %q\nusage: approvalbot %s\n", args[0], rulesUsage)
	return exitUsage
}

func rulesList(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "rules list", "rules list [--agent NAME] [--json]")
	agent := fs.String("agent", "", "only this agent's rules")
	asJSON := fs.Bool("json", false, "print the rules as JSON")
	if _, code, ok := parseFlags(e, fs, args, 0); !ok {
		return code
	}
	c := approverClientFromEnv(e)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	rules, err := c.Rules(ctx, *agent)
	if err != nil {
		return clientFailed(e, "rules", c, err)
	}
	if *asJSON {
		if rules == nil {
			rules = []gate.AlwaysRule{}
		}
		if err := printJSON(e, rules); err != nil {
			return exitFailure
		}
		return exitOK
	}
	if len(rules) == 0 {
		fmt.Fprintln(e.stdout, "no Always rules")
		return exitOK
	}
	now := time.Now()
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tTOOL\tPATTERN\tSCOPE\tEXPIRES\tBY")
	for _, r := range rules {
		scope := string(r.Scope)
		if r.Scope == gate.ScopeSession {
			scope += " " + cell(r.SessionID, 12)
		}
		expires := "never"
		switch {
		case r.ExpiresAt == nil:
		case !now.Before(*r.ExpiresAt):
			expires = "expired"
		default:
			expires = "in " + shortDuration(r.ExpiresAt.Sub(now))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(r.ID, 40), cell(r.Agent, 20), cell(r.Tool, 24),
			cell(r.Pattern, 60), scope, expires, cell(r.CreatedBy, 24))
	}
	if err := tw.Flush(); err != nil {
		return exitFailure
	}
	return exitOK
}

func rulesAdd(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "rules add", "rules add --agent NAME --tool TOOL --pattern GLOB [--scope agent|session --session ID] [--expires DURATION]")
	agent := fs.String("agent", "", "the agent the rule is for (required)")
	tool := fs.String("tool", "", "the tool name, e.g. Bash (required)")
	pattern := fs.String("pattern", "", `the glob, e.g. "git push *" (required)`)
	scope := fs.String("scope", "agent", "agent (persistent) or session")
	session := fs.String("session", "", "the session id, for --scope session")
	expires := fs.Duration("expires", 0, "remove the rule after this long (e.g. 8h; 0: never)")
	if _, code, ok := parseFlags(e, fs, args, 0); !ok {
		return code
	}
	switch {
	case *agent == "" || *tool == "" || *pattern == "":
		fmt.Fprintln(e.stderr, "approvalbot rules add: --agent, --tool and --pattern are required")
		return exitUsage
	case gate.Scope(*scope) != gate.ScopeAgent && gate.Scope(*scope) != gate.ScopeSession:
		fmt.Fprintf(e.stderr, "approvalbot rules add: bad --scope %q: want agent or session\n", *scope)
		return exitUsage
	case gate.Scope(*scope) == gate.ScopeSession && *session == "":
		fmt.Fprintln(e.stderr, "approvalbot rules add: --scope session needs --session ID")
		return exitUsage
	case *expires < 0:
		fmt.Fprintln(e.stderr, "approvalbot rules add: --expires must be positive")
		return exitUsage
	}
	r := gate.AlwaysRule{Agent: *agent, Tool: *tool, Pattern: *pattern, Scope: gate.Scope(*scope), SessionID: *session}
	if *expires > 0 {
		t := time.Now().Add(*expires).UTC()
		r.ExpiresAt = &t
	}
	c := approverClientFromEnv(e)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	added, err := c.AddRule(ctx, r)
	if err != nil {
		return clientFailed(e, "rules add", c, err)
	}
	fmt.Fprintf(e.stdout, "added %s: %s may run %s %q (%s)\n", cell(added.ID, 40), cell(added.Agent, 40),
		cell(added.Tool, 40), added.Pattern, added.Scope)
	return exitOK
}

func rulesRemove(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "rules rm", "rules rm ID")
	pos, code, ok := parseFlags(e, fs, args, 1)
	if !ok {
		return code
	}
	c := approverClientFromEnv(e)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	if err := c.DeleteRule(ctx, pos[0]); err != nil {
		return clientFailed(e, "rules rm", c, err)
	}
	fmt.Fprintf(e.stdout, "removed %s\n", cell(pos[0], 40))
	return exitOK
}

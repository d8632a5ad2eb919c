package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// runPending is `approvalbot pending [--json]`: the approvals waiting for a person.
func runPending(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "pending", "pending [--json]")
	asJSON := fs.Bool("json", false, "print the approvals as JSON")
	if _, code, ok := parseFlags(e, fs, args, 0); !ok {
		return code
	}
	c := approverClientFromEnv(e)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	list, err := c.List(ctx, gate.StatusPending)
	if err != nil {
		return clientFailed(e, "pending", c, err)
	}
	if *asJSON {
		if err := printJSON(e, list); err != nil {
			return exitFailure
		}
		return exitOK
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "no pending approvals")
		return exitOK
	}
	now := time.Now()
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGE\tAGENT\tTOOL\tCOMMAND\tRISKS\tASKED BY\tDEADLINE")
	for _, a := range list {
		// The same labels and rule every frontend shows (prompt.Build).
		c := prompt.Build(a, now)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\tin %s\n", cell(a.ID, 40), ago(a.CreatedAt, now), cell(a.Agent, 20),
			cell(a.Tool, 24), cell(summary(a), 60), cell(orDash(strings.Join(c.Risks, "; ")), 60),
			cell(orDash(c.AskedBy), 40), shortDuration(a.Deadline.Sub(now)))
	}
	if err := tw.Flush(); err != nil {
		return exitFailure
	}
	return exitOK
}

// summary is the part of a call a person recognises it by: the command
// line or the paths the gate judged, else the raw input itself (never a
// reading of it here: the gate decoded it once, with exact keys).
func summary(a *gate.Approval) string {
	if j := a.Judged; j != nil {
		switch {
		case j.Command != "":
			return j.Command
		case len(j.Paths) > 0:
			return strings.Join(j.Paths, ", ")
		}
	}
	if len(a.Input) == 0 {
		return "-"
	}
	return string(a.Input)
}

// orDash is s, or "-" for an empty cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

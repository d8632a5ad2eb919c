package main

import "context"

// TEMPORARY stub: replaced by audit.go.
func runAudit(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot audit: not implemented yet\n"))
	return exitFailure
}

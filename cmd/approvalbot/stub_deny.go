package main

import "context"

// TEMPORARY stub: replaced by deny.go.
func runDeny(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot deny: not implemented yet\n"))
	return exitFailure
}

package main

import "context"

// TEMPORARY stub: replaced by pending.go.
func runPending(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot pending: not implemented yet\n"))
	return exitFailure
}

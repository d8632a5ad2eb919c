package main

import "context"

// TEMPORARY stub: replaced by approve.go.
func runApprove(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot approve: not implemented yet\n"))
	return exitFailure
}

package main

import "context"

// TEMPORARY stub: replaced by check.go.
func runCheck(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot check: not implemented yet\n"))
	return exitFailure
}

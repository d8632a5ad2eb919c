package main

import "context"

// TEMPORARY stub: replaced by mode.go.
func runMode(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot mode: not implemented yet\n"))
	return exitFailure
}

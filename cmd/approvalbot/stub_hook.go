package main

import "context"

// TEMPORARY stub: replaced by hook.go.
func runHook(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot hook: not implemented yet\n"))
	return exitFailure
}

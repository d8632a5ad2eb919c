package main

import "context"

// TEMPORARY stub: replaced by rules.go.
func runRules(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot rules: not implemented yet\n"))
	return exitFailure
}

package main

import "context"

// TEMPORARY stub: replaced by version.go.
func runVersion(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot version: not implemented yet\n"))
	return exitFailure
}

package main

import "context"

// TEMPORARY stub: replaced by serve.go.
func runServe(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot serve: not implemented yet\n"))
	return exitFailure
}

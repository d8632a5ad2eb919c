package main

import "context"

// TEMPORARY stub: replaced by watch.go.
func runWatch(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot watch: not implemented yet\n"))
	return exitFailure
}

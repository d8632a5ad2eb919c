package main

import "context"

// TEMPORARY stub: replaced by doctor.go.
func runDoctor(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot doctor: not implemented yet\n"))
	return exitFailure
}

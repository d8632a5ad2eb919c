package main

import "context"

// TEMPORARY stub: replaced by mcp.go.
func runMCP(ctx context.Context, e *env, args []string) int {
	e.stderr.Write([]byte("approvalbot mcp: not implemented yet\n"))
	return exitFailure
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"approvalbot/agents"
)

const mcpUsage = `usage: approvalbot mcp [flags]

A stdio MCP server with one tool, "approve", for
  claude -p --permission-prompt-tool mcp__approvalbot__approve
Register it as an MCP server named "approvalbot" (see README.md). Calls are
submitted to $APPROVALBOT_URL with $APPROVALBOT_TOKEN.

flags:
`

// runMCP is `approvalbot mcp`: it serves MCP on stdin/stdout until stdin closes.
func runMCP(ctx context.Context, e *env, args []string) int {
	var f adapterFlags
	fs := flag.NewFlagSet("approvalbot mcp", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { fmt.Fprint(e.stderr, mcpUsage); fs.PrintDefaults() }
	f.register(fs, false)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "approvalbot mcp: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	o, err := f.options(e, agentClaude)
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot mcp: %v\n", err)
		return exitUsage
	}
	if wd, err := os.Getwd(); err == nil {
		o.Cwd = wd // Claude Code starts the server in the project directory
	}
	srv := agents.NewMCPServer(clientFromEnv(e), o, mcpServerVersion())
	if err := srv.Serve(ctx, e.stdin, e.stdout); err != nil {
		o.Logger.Error("mcp server stopped", "err", err)
		return exitFailure
	}
	return exitOK
}

// mcpServerVersion is the module version for serverInfo ("(devel)" from a
// source build).
func mcpServerVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

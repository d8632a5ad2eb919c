// Command approvalbot is a human-in-the-loop gate for AI agents' tool calls.
// See README.md; `approvalbot help` lists the subcommands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// Exit codes shared by every subcommand.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed (daemon unreachable, ...)
	exitUsage   = 2 // bad arguments or a bad rules file
)

// env is what a subcommand may touch of the process, so tests can run
// subcommands in-process with their own streams and environment.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

func commands() map[string]command {
	return map[string]command{
		"serve":      {"run the daemon (settings from APPROVALBOT_* environment variables)", runServe},
		"check":      {"evaluate one call offline and explain it", runCheck},
		"hook":       {"agent hook adapter: hook claude|codex|gemini|copilot|cursor|opencode", runHook},
		"install":    {"install AGENT: set up an agent's hook (claude, codex, gemini, copilot, cursor, opencode)", runInstall},
		"mcp":        {"stdio MCP server with a permission-prompt tool", runMCP},
		"watch":      {"answer pending approvals in the terminal", runWatch},
		"pending":    {"list pending approvals", runPending},
		"approve":    {"approve ID [--always]", runApprove},
		"deny":       {"deny ID [--reason R] [--stop]", runDeny},
		"rules":      {"rules list|add|rm: the Always rules", runRules},
		"mode":       {"mode AGENT [interactive|strict|approve_all]", runMode},
		"audit":      {"audit [--verify [--db FILE]]: the audit log", runAudit},
		"backup":     {"backup FILE: a checked copy of the running daemon's database", runBackup},
		"doctor":     {"check settings, rules, data dir and frontends", runDoctor},
		"ui-link":    {"print a one-time sign-in link (and QR code) for the web page", runUILink},
		"version":    {"print the version", runVersion},
		"completion": {"completion bash|zsh|fish: print a shell completion script", runCompletion},
		"suggest":    {"propose Always rules for calls people approve again and again", runSuggest},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, e *env, args []string) int {
	cmds := commands()
	switch {
	case len(args) == 0:
		usage(e.stderr, cmds)
		return exitUsage
	case args[0] == "-v" || args[0] == "--version":
		return runVersion(ctx, e, nil)
	case args[0] == "help" && len(args) > 1:
		// `help CMD` is `CMD --help`.
		if c, ok := cmds[args[1]]; ok {
			return c.run(ctx, e, []string{"--help"})
		}
		fmt.Fprintf(e.stderr, "approvalbot: unknown command %q\n", args[1])
		usage(e.stderr, cmds)
		return exitUsage
	case args[0] == "help" || args[0] == "-h" || args[0] == "--help":
		usage(e.stdout, cmds)
		return exitOK
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "approvalbot: unknown command %q\n", args[0])
		usage(e.stderr, cmds)
		return exitUsage
	}
	return c.run(ctx, e, args[1:])
}

func usage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: approvalbot COMMAND [ARGS]    (approvalbot help COMMAND for its flags)")
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "  --version  print the version")
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"approvalbot/agents"
	"approvalbot/api"
	"approvalbot/gate"
)

// defaultURL is where clients find the daemon when APPROVALBOT_URL is unset.
const defaultURL = "http://127.0.0.1:8754"

// Default agent names, when neither --agent nor APPROVALBOT_AGENT is set.
const (
	agentClaude = "claude-code"
	agentCodex  = "codex"
)

// adapterFlags are the flags shared by `hook` and `mcp`.
type adapterFlags struct {
	agent        string
	onError      string
	timeout      time.Duration
	connectGrace time.Duration
	deferAsk     bool
}

func (f *adapterFlags) register(fs *flag.FlagSet, withOnError bool) {
	fs.StringVar(&f.agent, "agent", "", "agent name the calls are submitted under (default $APPROVALBOT_AGENT, else the agent's name)")
	if withOnError {
		fs.StringVar(&f.onError, "on-error", "deny", "answer when the daemon cannot be reached: deny or ask (Claude Code's own prompt)")
	}
	fs.DurationVar(&f.timeout, "timeout", agents.DefaultHookTimeout, "own deadline per call; on it the answer is deny (keep it under the agent's hook timeout)")
	fs.DurationVar(&f.connectGrace, "connect-grace", agents.DefaultConnectGrace, "how long to keep trying a daemon that was never reached before failing closed")
}

// options builds the adapter options from the flags and the environment.
func (f *adapterFlags) options(e *env, defaultAgent string) (agents.Options, error) {
	o := agents.Options{
		Agent:         f.agent,
		Timeout:       f.timeout,
		ConnectGrace:  f.connectGrace,
		OnError:       gate.Deny,
		IsUnreachable: func(err error) bool { return errors.Is(err, api.ErrUnreachable) },
		Logger:        adapterLogger(e),
	}
	if o.Agent == "" {
		o.Agent = e.getenv("APPROVALBOT_AGENT")
	}
	if o.Agent == "" {
		o.Agent = defaultAgent
	}
	if f.timeout <= 0 {
		o.Timeout = -1 // no own deadline
	}
	switch f.onError {
	case "", "deny":
	case "ask":
		o.OnError = gate.Ask
	default:
		return o, fmt.Errorf("--on-error must be deny or ask, not %q", f.onError)
	}
	return o, nil
}

// adapterLogger logs to stderr (stdout belongs to the agent's protocol) at
// APPROVALBOT_LOG_LEVEL, default warn.
func adapterLogger(e *env) *slog.Logger {
	lvl := slog.LevelWarn
	if s := e.getenv("APPROVALBOT_LOG_LEVEL"); s != "" {
		_ = lvl.UnmarshalText([]byte(s)) // a bad level keeps warn; the hook must still answer
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: lvl}))
}

const hookUsage = `usage: approvalbot hook claude|codex|gemini|copilot|cursor|opencode [flags] < payload.json

Reads one hook payload (the agent's pre-tool event) on stdin, submits the
call to the daemon at $APPROVALBOT_URL (default ` + defaultURL + `) with
$APPROVALBOT_TOKEN, waits for the decision, and writes the hook's JSON answer
on stdout. Fails closed: anything but a decision to allow is a deny.

flags:
`

// runHook is `approvalbot hook claude|codex`. Exit codes follow the agents'
// hook contracts (see agents.RunClaudeHook, agents.RunCodexHook): 0 with a
// JSON decision on stdout, 2 for a blocking answer written to stderr.
func runHook(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(e.stderr, hookUsage)
		newHookFlags(io.Discard, "claude").PrintDefaults()
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	kind := args[0]
	if !isHookKind(kind) {
		fmt.Fprintf(e.stderr, "approvalbot hook: unknown agent %q (%s)\n", kind, hookKindList)
		return exitUsage
	}
	var f adapterFlags
	fs := newHookFlags(e.stderr, kind)
	f.register(fs, kind == "claude")
	if kind == "claude" {
		fs.BoolVar(&f.deferAsk, "defer", false, "claude -p only: when a person is needed, answer defer (the run exits; resume it with claude -p --resume SESSION after the decision) instead of waiting")
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage // 2: a blocking error for both agents, so a typo fails closed
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "approvalbot hook %s: unexpected arguments %q\n", kind, fs.Args())
		return exitUsage
	}
	o, err := f.options(e, hookDefaultAgent(kind))
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot hook %s: %v\n", kind, err)
		return exitUsage
	}
	// A hook whose agent was killed outright withdraws its approval.
	ctx, stopWatch := agents.WatchParent(ctx, agents.ParentPollInterval)
	defer stopWatch()
	if kind != "claude" && kind != "codex" {
		return runHostHook(ctx, e, kind, o)
	}
	if kind == "codex" {
		o.Logger = quietLogger() // Codex shows the hook's stderr to the model
		return agents.RunCodexHook(ctx, clientFromEnv(e), o, e.stdin, e.stdout, e.stderr)
	}
	if f.deferAsk {
		// Claude Code honours defer only in `claude -p` (its SDK entry
		// points); an interactive session ignores it and goes on to its own
		// permission flow, so there the hook waits as usual.
		if o.Defer = strings.HasPrefix(e.getenv("CLAUDE_CODE_ENTRYPOINT"), "sdk-"); !o.Defer {
			o.Logger.Info("approvalbot: --defer applies to claude -p only; waiting for the decision instead")
		}
	}
	return agents.RunClaudeHook(ctx, clientFromEnv(e), o, e.stdin, e.stdout, e.stderr)
}

func newHookFlags(out io.Writer, kind string) *flag.FlagSet {
	fs := flag.NewFlagSet("approvalbot hook "+kind, flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
}

package main

import (
	"context"
	"log/slog"
	"strings"

	"approvalbot/agents"
)

// Default agent names of the hosts beyond Claude Code and Codex.
var hostDefaultAgents = map[string]string{
	"gemini":   "gemini-cli",
	"copilot":  "copilot",
	"cursor":   "cursor",
	"opencode": "opencode",
}

// hookKindList names every `approvalbot hook` agent, for messages.
var hookKindList = func() string {
	names := []string{"claude", "codex"}
	for _, h := range agents.Hosts() {
		names = append(names, string(h))
	}
	return strings.Join(names, ", ")
}()

func isHookKind(kind string) bool {
	_, ok := hostDefaultAgents[kind]
	return ok || kind == "claude" || kind == "codex"
}

func hookDefaultAgent(kind string) string {
	switch kind {
	case "claude":
		return agentClaude
	case "codex":
		return agentCodex
	}
	return hostDefaultAgents[kind]
}

// quietLogger discards the adapter's diagnostics: these hosts show a hook's
// stderr to the model or parse it as the answer, and every failure is
// already in the reason the adapter answers with.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// runHostHook is `approvalbot hook gemini|copilot|cursor|opencode`.
func runHostHook(ctx context.Context, e *env, kind string, o agents.Options) int {
	o.Logger = quietLogger()
	return agents.RunHostHook(ctx, clientFromEnv(e), o, agents.Host(kind), e.stdin, e.stdout)
}

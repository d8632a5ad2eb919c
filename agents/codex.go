package agents

import (
	"context"
	"fmt"
	"io"

	"approvalbot/gate"
)

// Codex's command hook contract (codex-rs/hooks, hooks.json or [hooks] in
// config.toml): the payload on stdin has the Claude Code field names. For
// PreToolUse, `permissionDecision: "ask"` and `"allow"` without updatedInput
// are unsupported (the hook counts as failed and the tool runs), and so is
// `continue: false`; PermissionRequest takes `decision.behavior` allow|deny.
// Exit 2 with a reason on stderr blocks either event in every Codex version
// with hooks, so a deny is written that way (the JSON on stdout is for
// people reading logs); an allow is `{}` (no objection) or the
// PermissionRequest allow decision.

// codexOutput is the hook's stdout.
type codexOutput struct {
	HookSpecificOutput *claudeSpecific `json:"hookSpecificOutput,omitempty"`
}

// RunCodexHook answers one Codex PreToolUse or PermissionRequest hook
// invocation. It never answers ask: Codex would run the tool.
func RunCodexHook(ctx context.Context, d Decider, o Options, stdin io.Reader, stdout, stderr io.Writer) int {
	o.OnError = gate.Deny
	in, v, ok := hookVerdict(ctx, d, o, stdin, stderr)
	if !ok {
		return 2
	}
	if v.Action == gate.Allow {
		out := codexOutput{}
		if in.HookEventName == eventPermissionRequest {
			out.HookSpecificOutput = &claudeSpecific{HookEventName: eventPermissionRequest, Decision: &permissionDecision{Behavior: "allow"}}
		}
		if err := writeJSON(stdout, out); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		return 0
	}
	reason := v.Reason
	if v.Stop {
		// Codex has no supported way for a hook to end the turn; say it.
		reason += " (stop: do not retry; wait for the user's instructions)"
	}
	out := codexOutput{HookSpecificOutput: &claudeSpecific{HookEventName: eventPreToolUse, PermissionDecision: "deny", PermissionDecisionReason: reason}}
	if in.HookEventName == eventPermissionRequest {
		out.HookSpecificOutput = &claudeSpecific{HookEventName: eventPermissionRequest, Decision: &permissionDecision{Behavior: "deny", Message: reason}}
	}
	_ = writeJSON(stdout, out) // informational; exit 2 + stderr is the decision
	fmt.Fprintln(stderr, reason)
	return 2
}

package agents

import (
	"context"
	"fmt"
	"io"

	"approvalbot/gate"
)

// Claude Code's command hook contract (as of Claude Code 2.1; see
// https://docs.claude.com/en/docs/claude-code/hooks): the payload comes on
// stdin; on exit 0 stdout is parsed as JSON; exit 2 is a "blocking error"
// whose stderr goes to the model; any other failure (other exit codes, a
// timeout, invalid JSON) lets the action go ahead unless the hook has
// `"onFailure": "block"`. So the hook always exits 0 with a JSON decision,
// and exits 2 only for events it cannot answer.

// claudeOutput is the hook's stdout.
type claudeOutput struct {
	// Continue false stops the agent's turn (with StopReason shown to the user).
	Continue           *bool           `json:"continue,omitempty"`
	StopReason         string          `json:"stopReason,omitempty"`
	HookSpecificOutput *claudeSpecific `json:"hookSpecificOutput,omitempty"`
}

type claudeSpecific struct {
	HookEventName string `json:"hookEventName"`
	// PreToolUse: allow | deny | ask | defer, and the reason (deny: shown
	// to the model; ask: shown in Claude's own prompt; defer: `claude -p`
	// exits with stop_reason "tool_deferred" and re-runs the hook for the
	// same tool_use_id on --resume).
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	// PermissionRequest: the decision on Claude's own permission prompt.
	Decision *permissionDecision `json:"decision,omitempty"`
}

// permissionDecision is a PermissionRequest hook's decision, and (with the
// same field names) the permission-prompt tool's answer.
type permissionDecision struct {
	Behavior     string `json:"behavior"`
	UpdatedInput any    `json:"updatedInput,omitempty"`
	Message      string `json:"message,omitempty"`
	Interrupt    bool   `json:"interrupt,omitempty"`
}

// RunClaudeHook answers one Claude Code PreToolUse or PermissionRequest hook
// invocation: it reads the payload from stdin, waits for the decision and
// writes the hook JSON to stdout. It returns the process exit code.
func RunClaudeHook(ctx context.Context, d Decider, o Options, stdin io.Reader, stdout, stderr io.Writer) int {
	in, v, ok := hookVerdict(ctx, d, o, stdin, stderr)
	if !ok {
		return 2
	}
	if err := writeJSON(stdout, claudeAnswer(in.HookEventName, v)); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	return 0
}

// claudeAnswer renders v in the shape of the hook event.
func claudeAnswer(event string, v Verdict) claudeOutput {
	var out claudeOutput
	if v.Stop {
		f := false
		out.Continue = &f
		out.StopReason = v.StopReason
	}
	if event == eventPermissionRequest {
		switch v.Action {
		case gate.Allow:
			out.HookSpecificOutput = &claudeSpecific{HookEventName: event, Decision: &permissionDecision{Behavior: "allow"}}
		case gate.Ask:
			// No decision: Claude Code shows its own permission prompt.
		default:
			out.HookSpecificOutput = &claudeSpecific{HookEventName: event, Decision: &permissionDecision{Behavior: "deny", Message: v.Reason, Interrupt: v.Stop}}
		}
		return out
	}
	action := string(v.Action)
	if !v.Action.Valid() {
		action = string(gate.Deny)
	}
	if v.Defer {
		action = "defer"
	}
	out.HookSpecificOutput = &claudeSpecific{
		HookEventName:            eventPreToolUse,
		PermissionDecision:       action,
		PermissionDecisionReason: v.Reason,
	}
	return out
}

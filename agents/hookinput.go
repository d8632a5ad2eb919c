package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"approvalbot/gate"
)

// Hook event names, as Claude Code and Codex spell them.
const (
	eventPreToolUse        = "PreToolUse"
	eventPermissionRequest = "PermissionRequest"
)

// maxHookInput bounds a hook payload (a Write of a large file carries the
// whole content). Larger payloads are denied, not truncated.
const maxHookInput = 32 << 20

// hookInput is the part of a command hook's stdin payload the adapters use.
// Claude Code and Codex share these field names. Unknown fields are ignored
// and every field but tool_name may be missing (older Claude Code versions
// send neither cwd nor tool_use_id nor permission_mode).
type hookInput struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath *string         `json:"transcript_path"` // Codex sends null
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
}

// parseHookInput reads and checks a hook payload. On error the returned
// input still carries what could be read (the event name, for the answer's shape).
func parseHookInput(r io.Reader) (hookInput, error) {
	var in hookInput
	raw, err := readRaw(r)
	if err != nil {
		return in, err
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return hookInput{}, fmt.Errorf("hook input is not valid JSON: %w", err)
	}
	if in.ToolName == "" {
		return in, errors.New("hook input has no tool_name")
	}
	in.ToolInput = bytes.TrimSpace(in.ToolInput)
	switch {
	case len(in.ToolInput) == 0 || string(in.ToolInput) == "null":
		in.ToolInput = json.RawMessage("{}")
	case in.ToolInput[0] != '{':
		return in, errors.New("hook input's tool_input is not a JSON object")
	}
	return in, nil
}

// call is the tool call the payload describes.
func (in hookInput) call(o Options) gate.Call {
	cwd := in.Cwd
	if cwd == "" {
		cwd = o.Cwd
	}
	return gate.Call{
		Agent:          o.Agent,
		SessionID:      in.SessionID,
		Tool:           in.ToolName,
		Input:          normalizePatchInput(in.ToolName, in.ToolInput), // Codex's apply_patch
		Cwd:            cwd,
		IdempotencyKey: in.ToolUseID,
	}
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode answer: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write answer: %w", err)
	}
	return nil
}

// hookVerdict reads one hook payload (Claude Code and Codex share its shape)
// and decides it. Input that cannot be read is a deny. ok is false for an
// event that does not decide a tool call: it is reported on stderr and the
// caller exits 2, which blocks the event if it can be blocked at all.
func hookVerdict(ctx context.Context, d Decider, o Options, stdin io.Reader, stderr io.Writer) (hookInput, Verdict, bool) {
	in, err := parseHookInput(stdin)
	switch {
	case err != nil:
		return in, deny("could not read the hook input, denied to be safe: %s", clip(err.Error())), true
	case in.HookEventName != "" && in.HookEventName != eventPreToolUse && in.HookEventName != eventPermissionRequest:
		fmt.Fprintf(stderr, "approvalbot: hook event %q is not supported; configure it on PreToolUse or PermissionRequest\n", clip(in.HookEventName))
		return in, Verdict{}, false
	}
	if in.HookEventName != eventPreToolUse {
		o.Defer = false // only PreToolUse answers can defer
	}
	return in, decide(ctx, d, in.call(o), o), true
}

package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"approvalbot/gate"
)

// Host names an agent whose own hook format approvalbot reads and answers
// (Claude Code and Codex have their own entry points, RunClaudeHook and
// RunCodexHook, which predate this one).
type Host string

// The hosts RunHostHook speaks.
const (
	// HostGemini is Gemini CLI's BeforeTool command hook
	// (https://github.com/google-gemini/gemini-cli/blob/main/docs/hooks/reference.md):
	// snake_case payload with no tool-call id; the answer is
	// {"decision":"allow"|"deny","reason":...} on stdout, parsed whatever the
	// exit code. No output, a crash or a timeout lets the tool run, so the
	// hook always prints a decision.
	HostGemini Host = "gemini"
	// HostCopilot is GitHub Copilot CLI's preToolUse / permissionRequest
	// command hook (docs: copilot-cli-reference/cli-hooks-reference.md).
	// camelCase events send {sessionId, timestamp, cwd, toolName, toolArgs}
	// with toolArgs an object (older versions: a JSON string); PascalCase
	// events ("PreToolUse") send the Claude Code shape and take its answer.
	// A hook that fails or times out is skipped: the tool runs.
	HostCopilot Host = "copilot"
	// HostCursor is Cursor's hooks.json (https://cursor.com/docs/agent/hooks):
	// preToolUse {tool_name, tool_input, tool_use_id, cwd}, or the older
	// beforeShellExecution {command, cwd}, beforeMCPExecution and
	// beforeReadFile; the answer is {"permission":"allow"|"deny",
	// "user_message", "agent_message"}. It fails open unless the hook has
	// "failClosed": true.
	HostCursor Host = "cursor"
	// HostOpencode is approvalbot's own opencode plugin (OpencodePlugin),
	// which pipes {sessionID, callID, tool, args, directory} from opencode's
	// tool.execute.before to `approvalbot hook opencode` and throws unless
	// the answer is {"decision":"allow"}.
	HostOpencode Host = "opencode"
)

// Hosts lists the hosts RunHostHook speaks.
func Hosts() []Host { return []Host{HostGemini, HostCopilot, HostCursor, HostOpencode} }

// Event names of the hosts, as they send them.
const (
	eventGeminiBeforeTool         = "BeforeTool"
	eventCopilotPreToolUse        = "preToolUse"
	eventCopilotPermissionRequest = "permissionRequest"
	eventCursorPreToolUse         = "preToolUse"
	eventCursorShell              = "beforeShellExecution"
	eventCursorMCP                = "beforeMCPExecution"
	eventCursorReadFile           = "beforeReadFile"
)

// payload is one hook invocation of any host, normalized: what the gate
// judges and what the answer's shape depends on.
type payload struct {
	// Event is the host's event name, as sent or implied.
	Event string
	// Claude is set for a Copilot payload in the Claude Code shape
	// (PascalCase event, snake_case fields), which takes Claude's answer.
	Claude    bool
	SessionID string
	Cwd       string
	Tool      string
	Input     json.RawMessage
	// Key is the host's tool-call id, if it sends one; else the daemon
	// derives the idempotency key from session, cwd, tool and input.
	Key string
}

func (p payload) call(o Options) gate.Call {
	cwd := p.Cwd
	if cwd == "" {
		cwd = o.Cwd
	}
	return gate.Call{Agent: o.Agent, SessionID: p.SessionID, Tool: p.Tool, Input: p.Input, Cwd: cwd, IdempotencyKey: p.Key}
}

// readRaw reads one payload object, bounded.
func readRaw(r io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxHookInput+1))
	if err != nil {
		return nil, fmt.Errorf("read hook input: %w", err)
	}
	if len(raw) > maxHookInput {
		return nil, fmt.Errorf("hook input larger than %d bytes", maxHookInput)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, errors.New("hook input is empty")
	}
	if raw[0] != '{' {
		return nil, errors.New("hook input is not a JSON object")
	}
	return raw, nil
}

// readPayload is the one reader of every host's payload.
func readPayload(h Host, r io.Reader) (payload, error) {
	raw, err := readRaw(r)
	if err != nil {
		return payload{}, err
	}
	var p payload
	switch h {
	case HostGemini:
		p, err = readGemini(raw)
	case HostCopilot:
		p, err = readCopilot(raw)
	case HostCursor:
		p, err = readCursor(raw)
	case HostOpencode:
		p, err = readOpencode(raw)
	default:
		return payload{}, fmt.Errorf("unknown host %q", h)
	}
	if err != nil {
		return p, err
	}
	if p.Tool == "" {
		return p, errors.New("hook input names no tool")
	}
	if p.Input, err = objectInput(p.Input); err != nil {
		return p, err
	}
	p.Input = normalizePatchInput(p.Tool, p.Input)
	return p, nil
}

// objectInput checks a tool input: a JSON object, or a string holding one
// (Copilot's older toolArgs, Cursor's MCP tool_input); absent is {}.
func objectInput(in json.RawMessage) (json.RawMessage, error) {
	in = bytes.TrimSpace(in)
	if len(in) == 0 || string(in) == "null" {
		return json.RawMessage("{}"), nil
	}
	if in[0] == '"' {
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return nil, fmt.Errorf("tool input is not a valid JSON string: %w", err)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return json.RawMessage("{}"), nil
		}
		if s[0] != '{' || !json.Valid([]byte(s)) {
			return nil, errors.New("tool input is a string that does not hold a JSON object")
		}
		return json.RawMessage(s), nil
	}
	if in[0] != '{' {
		return nil, errors.New("tool input is not a JSON object")
	}
	return in, nil
}

// readGemini reads a Gemini CLI hook payload. run_shell_command's dir_path
// (relative to cwd) is where the command runs: the gate reads it from the
// input, as it reads workdir.
func readGemini(raw []byte) (payload, error) {
	var in struct {
		SessionID     string          `json:"session_id"`
		Cwd           string          `json:"cwd"`
		HookEventName string          `json:"hook_event_name"`
		ToolName      string          `json:"tool_name"`
		ToolInput     json.RawMessage `json:"tool_input"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return payload{}, fmt.Errorf("hook input is not valid JSON: %w", err)
	}
	p := payload{Event: in.HookEventName, SessionID: in.SessionID, Cwd: in.Cwd, Tool: in.ToolName, Input: in.ToolInput}
	if p.Event != "" && p.Event != eventGeminiBeforeTool {
		return p, fmt.Errorf("hook event %q is not supported; configure approvalbot on BeforeTool", clip(p.Event))
	}
	return p, nil
}

// readCopilot reads a Copilot CLI hook payload in either of its shapes.
func readCopilot(raw []byte) (payload, error) {
	var in struct {
		// camelCase (preToolUse, permissionRequest)
		SessionID string          `json:"sessionId"`
		Cwd       string          `json:"cwd"`
		ToolName  string          `json:"toolName"`
		ToolArgs  json.RawMessage `json:"toolArgs"`
		// PascalCase events: the Claude Code shape
		HookEventName string          `json:"hook_event_name"`
		SessionIDS    string          `json:"session_id"`
		ToolNameS     string          `json:"tool_name"`
		ToolInput     json.RawMessage `json:"tool_input"`
		ToolUseID     string          `json:"tool_use_id"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return payload{}, fmt.Errorf("hook input is not valid JSON: %w", err)
	}
	if in.HookEventName != "" {
		p := payload{Event: in.HookEventName, Claude: true, SessionID: in.SessionIDS, Cwd: in.Cwd, Tool: in.ToolNameS, Input: in.ToolInput, Key: in.ToolUseID}
		if p.Event != eventPreToolUse && p.Event != eventPermissionRequest {
			return p, fmt.Errorf("hook event %q is not supported; configure approvalbot on preToolUse or permissionRequest", clip(p.Event))
		}
		return p, nil
	}
	// The camelCase payload names no event; the answer carries the fields
	// of both (each event reads its own).
	return payload{Event: eventCopilotPreToolUse, SessionID: in.SessionID, Cwd: in.Cwd, Tool: in.ToolName, Input: in.ToolArgs}, nil
}

// readCursor reads a Cursor hook payload.
func readCursor(raw []byte) (payload, error) {
	var in struct {
		HookEventName  string          `json:"hook_event_name"`
		ConversationID string          `json:"conversation_id"`
		WorkspaceRoots []string        `json:"workspace_roots"`
		Cwd            string          `json:"cwd"`
		Command        *string         `json:"command"`
		ToolName       string          `json:"tool_name"`
		ToolInput      json.RawMessage `json:"tool_input"`
		ToolUseID      string          `json:"tool_use_id"`
		FilePath       *string         `json:"file_path"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return payload{}, fmt.Errorf("hook input is not valid JSON: %w", err)
	}
	p := payload{Event: in.HookEventName, SessionID: in.ConversationID, Cwd: in.Cwd}
	if p.Cwd == "" && len(in.WorkspaceRoots) > 0 {
		p.Cwd = in.WorkspaceRoots[0]
	}
	switch p.Event {
	case eventCursorPreToolUse, eventCursorMCP:
		p.Tool, p.Input, p.Key = in.ToolName, in.ToolInput, in.ToolUseID
	case eventCursorShell:
		if in.Command == nil {
			return p, errors.New("beforeShellExecution input has no command")
		}
		p.Tool = "Shell" // Cursor's shell tool, as preToolUse names it
		p.Input, _ = json.Marshal(map[string]string{"command": *in.Command})
	case eventCursorReadFile:
		if in.FilePath == nil {
			return p, errors.New("beforeReadFile input has no file_path")
		}
		p.Tool = "Read"
		p.Input, _ = json.Marshal(map[string]string{"file_path": *in.FilePath})
	default:
		return p, fmt.Errorf("hook event %q is not supported; configure approvalbot on preToolUse (or beforeShellExecution)", clip(p.Event))
	}
	return p, nil
}

// readOpencode reads what approvalbot's opencode plugin sends.
func readOpencode(raw []byte) (payload, error) {
	var in struct {
		SessionID string          `json:"sessionID"`
		CallID    string          `json:"callID"`
		Tool      string          `json:"tool"`
		Args      json.RawMessage `json:"args"`
		Directory string          `json:"directory"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return payload{}, fmt.Errorf("hook input is not valid JSON: %w", err)
	}
	return payload{Event: "tool.execute.before", SessionID: in.SessionID, Cwd: in.Directory, Tool: in.Tool, Input: in.Args, Key: in.CallID}, nil
}

// normalizePatchInput rewrites Codex's apply_patch input,
// {"command": "*** Begin Patch ..."}, as {"input": "..."}, where the gate
// reads a patch: its files are then judged as writes and the patch is shown
// as a diff. Only an object whose one key is "command" (spelled so, once)
// holding a patch is rewritten; anything else is left for the gate to judge
// (or refuse) as it came.
func normalizePatchInput(tool string, in json.RawMessage) json.RawMessage {
	if tool != "apply_patch" {
		return in
	}
	keys, err := objectKeys(in)
	if err != nil || len(keys) != 1 || keys[0] != "command" {
		return in
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(in, &m) != nil {
		return in
	}
	var s string
	if json.Unmarshal(m["command"], &s) != nil || !strings.HasPrefix(strings.TrimSpace(s), "*** Begin Patch") {
		return in
	}
	out, err := json.Marshal(map[string]string{"input": s})
	if err != nil {
		return in
	}
	return out
}

// objectKeys lists the top-level keys of a JSON object in order, repeats
// included (encoding/json would keep only the last of a repeated key).
func objectKeys(obj json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := t.(string)
		if !ok {
			return nil, errors.New("bad key")
		}
		keys = append(keys, k)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// RunHostHook answers one hook invocation of host h: it reads the payload
// from stdin, waits for the decision and writes the host's answer to
// stdout. It always answers allow or deny itself, never ask and never with
// empty output (each of these hosts runs the tool on a hook that says
// nothing, fails or times out), writes nothing to stderr (some hosts show it
// to the model), and returns the process exit code, 0.
func RunHostHook(ctx context.Context, d Decider, o Options, h Host, stdin io.Reader, stdout io.Writer) int {
	o.OnError = gate.Deny
	p, err := readPayload(h, stdin)
	var v Verdict
	if err != nil {
		v = deny("could not read the hook input, denied to be safe: %s", clip(err.Error()))
	} else {
		v = decide(ctx, d, p.call(o), o)
	}
	if v.Action != gate.Allow {
		v.Action = gate.Deny
	}
	if err := writeJSON(stdout, hostAnswer(h, p, v)); err != nil {
		// Nothing more can be said: stdout is gone. Exit 2 is a block for
		// every host that reads exit codes.
		return 2
	}
	return 0
}

// hostAnswer encodes v in host h's answer format.
func hostAnswer(h Host, p payload, v Verdict) any {
	allow := v.Action == gate.Allow
	word := "deny"
	if allow {
		word = "allow"
	}
	switch h {
	case HostGemini:
		out := geminiOutput{Decision: word}
		if !allow {
			out.Reason = v.Reason
		}
		if v.Stop {
			f := false
			out.Continue, out.StopReason = &f, v.StopReason
		}
		return out
	case HostCopilot:
		if p.Claude {
			return claudeAnswer(p.Event, v)
		}
		out := copilotOutput{PermissionDecision: word, PermissionDecisionReason: v.Reason, Behavior: word}
		if !allow {
			out.Message, out.Interrupt = v.Reason, v.Stop
		}
		return out
	case HostCursor:
		reason := v.Reason
		if v.Stop {
			// Cursor's permission answers cannot end the turn; say it.
			reason += " (stop: do not retry; wait for the user's instructions)"
		}
		out := cursorOutput{Permission: word}
		if !allow {
			out.UserMessage, out.AgentMessage = reason, reason
		}
		return out
	default: // HostOpencode
		out := opencodeOutput{Decision: word, Reason: v.Reason, Stop: v.Stop}
		return out
	}
}

type geminiOutput struct {
	Decision   string `json:"decision"`
	Reason     string `json:"reason,omitempty"`
	Continue   *bool  `json:"continue,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
}

// copilotOutput answers both camelCase events at once: preToolUse reads
// permissionDecision, permissionRequest reads behavior (and message,
// interrupt); each ignores the other's fields.
type copilotOutput struct {
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	Behavior                 string `json:"behavior"`
	Message                  string `json:"message,omitempty"`
	Interrupt                bool   `json:"interrupt,omitempty"`
}

type cursorOutput struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

type opencodeOutput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	Stop     bool   `json:"stop,omitempty"`
}

package agents

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"approvalbot/gate"
)

// The MCP stdio transport (https://modelcontextprotocol.io/specification,
// "Transports"): JSON-RPC 2.0 messages, one per line, UTF-8, no embedded
// newlines; the server writes nothing to stdout that is not a message.

// MCPToolName is the permission-prompt tool's name. Claude Code calls it
// mcp__<server>__approve, so with the server registered as "approvalbot":
// `claude -p --permission-prompt-tool mcp__approvalbot__approve`.
const MCPToolName = "approve"

// mcpProtocolVersions are the MCP revisions this server speaks, newest first.
// The server answers initialize with the client's version when it is one of
// these, else with the newest (the client then decides whether to go on).
var mcpProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// maxMCPLine bounds one incoming message.
const maxMCPLine = 32 << 20

// JSON-RPC 2.0 error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
)

// MCPServer is a stdio MCP server exposing the permission-prompt tool
// `approve`. Each tools/call waits for its own decision; calls run
// concurrently and notifications/cancelled withdraws one.
type MCPServer struct {
	d       Decider
	o       Options
	version string

	outMu sync.Mutex
	out   io.Writer

	mu       sync.Mutex
	inflight map[string]context.CancelFunc
}

// NewMCPServer returns a server that decides through d. version is reported
// as serverInfo.version.
func NewMCPServer(d Decider, o Options, version string) *MCPServer {
	o.OnError = gate.Deny // the permission-prompt tool has no ask
	return &MCPServer{d: d, o: o, version: version, inflight: map[string]context.CancelFunc{}}
}

// rpcMessage is any incoming JSON-RPC message. ID is nil when absent
// (a notification) and "null" when null.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Serve reads messages from in until EOF or ctx ends, answering on out.
// In-flight calls are then withdrawn (their approvals cancelled) and
// Serve returns after they finished.
func (s *MCPServer) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.out = out
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() { readErr <- readLines(ctx, in, lines) }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-readErr:
			return err
		case line := <-lines:
			s.handle(ctx, line, &wg)
		}
	}
}

// readLines sends each non-empty line of in to lines. A line longer than
// maxMCPLine is sent as nil (a parse error for the caller).
func readLines(ctx context.Context, in io.Reader, lines chan<- []byte) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || line == nil && err == errLineTooLong {
			select {
			case lines <- line:
			case <-ctx.Done():
				return nil
			}
		}
		if err == errLineTooLong {
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read MCP input: %w", err)
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline. A line over the limit
// is skipped up to its end and reported as (nil, errLineTooLong).
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > maxMCPLine {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// handle answers one message; tools/call runs in its own goroutine.
func (s *MCPServer) handle(ctx context.Context, line []byte, wg *sync.WaitGroup) {
	if line == nil {
		s.reply(nil, nil, &rpcError{rpcParseError, "message too large"})
		return
	}
	var m rpcMessage
	if err := json.Unmarshal(line, &m); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) || (len(line) > 0 && line[0] != '{' && json.Valid(line)) {
			s.reply(nil, nil, &rpcError{rpcInvalidRequest, "not a JSON-RPC request object"})
			return
		}
		s.reply(nil, nil, &rpcError{rpcParseError, "parse error"})
		return
	}
	if m.Method == "" {
		if m.ID != nil && (m.Result != nil || m.Error != nil) {
			return // a response to a request we never send; ignore
		}
		s.reply(validID(m.ID), nil, &rpcError{rpcInvalidRequest, "missing method"})
		return
	}
	isNotification := m.ID == nil
	if m.JSONRPC != "2.0" || (!isNotification && validID(m.ID) == nil) {
		if !isNotification {
			s.reply(validID(m.ID), nil, &rpcError{rpcInvalidRequest, "invalid request: jsonrpc must be \"2.0\" and id a string or number"})
		}
		return
	}
	if isNotification {
		if m.Method == "notifications/cancelled" {
			s.cancelled(m.Params)
		}
		// notifications/initialized and anything else need no answer.
		return
	}
	switch m.Method {
	case "initialize":
		s.reply(m.ID, s.initialize(m.Params), nil)
	case "ping":
		s.reply(m.ID, struct{}{}, nil)
	case "tools/list":
		s.reply(m.ID, map[string]any{"tools": []any{approveTool()}}, nil)
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(orEmpty(m.Params), &p); err != nil {
			s.reply(m.ID, nil, &rpcError{rpcInvalidParams, "invalid tools/call params"})
			return
		}
		if p.Name != MCPToolName {
			s.reply(m.ID, nil, &rpcError{rpcInvalidParams, fmt.Sprintf("unknown tool %q", clip(p.Name))})
			return
		}
		id := validID(m.ID)
		key := string(id)
		cctx, cancel := context.WithCancel(ctx)
		s.mu.Lock()
		if _, dup := s.inflight[key]; dup {
			s.mu.Unlock()
			cancel()
			s.reply(id, nil, &rpcError{rpcInvalidRequest, "request id already in use"})
			return
		}
		s.inflight[key] = cancel
		s.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			result := s.approve(cctx, p.Arguments)
			s.mu.Lock()
			delete(s.inflight, key)
			s.mu.Unlock()
			// A cancelled request gets no answer (MCP "Cancellation").
			if cctx.Err() == nil {
				s.reply(id, result, nil)
			}
			cancel()
		}()
	default:
		s.reply(m.ID, nil, &rpcError{rpcMethodNotFound, fmt.Sprintf("method %q not found", clip(m.Method))})
	}
}

func (s *MCPServer) initialize(params json.RawMessage) map[string]any {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(orEmpty(params), &p) // lenient: a bad params still gets our version
	v := mcpProtocolVersions[0]
	if slices.Contains(mcpProtocolVersions, p.ProtocolVersion) {
		v = p.ProtocolVersion
	}
	return map[string]any{
		"protocolVersion": v,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
		"serverInfo":      map[string]any{"name": "approvalbot", "version": s.version},
		"instructions":    "Permission prompt for Claude Code: run `claude -p --permission-prompt-tool mcp__approvalbot__approve`.",
	}
}

func approveTool() map[string]any {
	return map[string]any{
		"name":        MCPToolName,
		"description": "Ask approvalbot (rules, then a person on Telegram/Slack/terminal) whether a tool call may run. Answers {\"behavior\":\"allow\",\"updatedInput\":...} or {\"behavior\":\"deny\",\"message\":...}.",
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"tool_name":   map[string]any{"type": "string", "description": "the tool the agent wants to call"},
				"input":       map[string]any{"type": "object", "description": "the tool's input"},
				"tool_use_id": map[string]any{"type": "string", "description": "the tool call's id"},
			},
			"required": []string{"tool_name", "input"},
		},
	}
}

// approveArgs are the arguments Claude Code passes to the permission-prompt tool.
type approveArgs struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

// approve decides one call and returns the tools/call result: one text item
// holding the permission decision JSON. Bad arguments are a deny, never an error
// the agent could mistake for anything else.
func (s *MCPServer) approve(ctx context.Context, rawArgs json.RawMessage) map[string]any {
	var a approveArgs
	var v Verdict
	err := json.Unmarshal(orEmpty(rawArgs), &a)
	input := bytes.TrimSpace(a.Input)
	switch {
	case err != nil:
		v = deny("could not read the permission request, denied to be safe: %s", clip(err.Error()))
	case a.ToolName == "":
		v = deny("the permission request has no tool_name, denied to be safe")
	case len(input) == 0 || input[0] != '{':
		v = deny("the permission request's input is not a JSON object, denied to be safe")
	default:
		cwd := s.o.Cwd
		if gate.DefaultToolKind(a.ToolName) == gate.KindShell {
			// Claude's shell keeps its directory between commands and the
			// permission request does not say where this one runs: the
			// directory the server started in is no guide (a `cd .claude`
			// allowed earlier). Without one, relative paths ask.
			cwd = ""
		}
		v = decide(ctx, s.d, gate.Call{Agent: s.o.Agent, Tool: a.ToolName, Input: input, Cwd: cwd, IdempotencyKey: a.ToolUseID}, s.o)
	}
	d := permissionDecision{Behavior: "deny", Message: v.Reason, Interrupt: v.Stop}
	if v.Action == gate.Allow {
		// updatedInput is the input as received: approvalbot never rewrites a call.
		d = permissionDecision{Behavior: "allow", UpdatedInput: json.RawMessage(input)}
	}
	text, err := json.Marshal(d)
	if err != nil {
		text = []byte(`{"behavior":"deny","message":"approvalbot: could not encode the answer"}`)
	}
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}}
}

// cancelled handles notifications/cancelled: the request's wait ends and
// its approval is withdrawn.
func (s *MCPServer) cancelled(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(orEmpty(params), &p) != nil || p.RequestID == nil {
		return
	}
	s.mu.Lock()
	cancel := s.inflight[string(compact(p.RequestID))]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// reply writes one response line. id nil writes "id": null.
func (s *MCPServer) reply(id json.RawMessage, result any, e *rpcError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := rpcResponse{JSONRPC: "2.0", ID: id, Result: result, Error: e}
	if e == nil && result == nil {
		resp.Result = struct{}{}
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if err := writeJSON(s.out, resp); err != nil {
		s.o.logger().Error("write MCP response", "err", err)
	}
}

// validID returns id compacted if it is a JSON string or number, else nil.
func validID(id json.RawMessage) json.RawMessage {
	id = compact(id)
	if len(id) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(id, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return id
	}
	return nil
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return json.RawMessage("{}")
	}
	return raw
}

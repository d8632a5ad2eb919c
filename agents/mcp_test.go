package agents

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"approvalbot/gate"
)

// mcpSession runs an MCPServer on pipes.
type mcpSession struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func startMCP(t *testing.T, d Decider, o Options) *mcpSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &mcpSession{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	s.out.Buffer(nil, 1<<20)
	srv := NewMCPServer(d, o, "test")
	go func() {
		err := srv.Serve(context.Background(), inR, outW)
		outW.Close()
		s.done <- err
	}()
	t.Cleanup(func() { inW.Close() })
	return s
}

func (s *mcpSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// recv reads the next response.
func (s *mcpSession) recv() map[string]any {
	s.t.Helper()
	if !s.out.Scan() {
		s.t.Fatalf("no response: %v", s.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
		s.t.Fatalf("response is not JSON: %v: %s", err, s.out.Bytes())
	}
	if m["jsonrpc"] != "2.0" {
		s.t.Fatalf("response without jsonrpc 2.0: %s", s.out.Bytes())
	}
	return m
}

// close ends the input and checks the server stops without more output.
func (s *mcpSession) close() {
	s.t.Helper()
	s.in.Close()
	if s.out.Scan() {
		s.t.Fatalf("unexpected output after close: %s", s.out.Bytes())
	}
	if err := <-s.done; err != nil {
		s.t.Fatalf("Serve: %v", err)
	}
}

// permission decodes a tools/call result's single text item.
func permission(t *testing.T, resp map[string]any) map[string]any {
	t.Helper()
	content, _ := path(resp, "result.content").([]any)
	if len(content) != 1 {
		t.Fatalf("want one content item, got %v", resp)
	}
	item := content[0].(map[string]any)
	if item["type"] != "text" {
		t.Fatalf("content item type %v", item["type"])
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(item["text"].(string)), &d); err != nil {
		t.Fatalf("text is not JSON: %v", err)
	}
	return d
}

func TestMCPRecordedClaudeSession(t *testing.T) {
	f := &fakeDecider{answer: answerWith(apApproved)}
	s := startMCP(t, f, Options{Agent: "claude-code", Cwd: "/home/dev/proj"})
	// Recorded from Claude Code 2.1.330: a server/discover probe (a newer MCP
	// revision), then the classic initialize handshake.
	lines := strings.Split(strings.TrimSpace(string(readTestdata(t, "mcp_claude_2.1.330_session.jsonl"))), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d recorded lines", len(lines))
	}
	s.send(lines[0]) // server/discover: unknown here, so Claude falls back to initialize
	if probe := s.recv(); probe["id"] != "server-discover-probe-1" || path(probe, "error.code") != float64(rpcMethodNotFound) {
		t.Fatalf("discover probe: %v", probe)
	}
	lines = lines[1:]
	s.send(lines[0]) // initialize
	init := s.recv()
	if path(init, "id") != float64(0) || path(init, "result.protocolVersion") != "2025-11-25" ||
		path(init, "result.serverInfo.name") != "approvalbot" || path(init, "result.capabilities.tools") == nil {
		t.Fatalf("initialize: %v", init)
	}
	s.send(lines[1]) // notifications/initialized: no answer
	s.send(lines[2]) // tools/list
	list := s.recv()
	tools, _ := path(list, "result.tools").([]any)
	if len(tools) != 1 {
		t.Fatalf("tools/list: %v", list)
	}
	tool := tools[0].(map[string]any)
	if tool["name"] != "approve" || path(tool, "inputSchema.type") != "object" ||
		path(tool, "inputSchema.properties.tool_name.type") != "string" || path(tool, "inputSchema.properties.input.type") != "object" ||
		path(tool, "inputSchema.properties.tool_use_id.type") != "string" {
		t.Fatalf("tool: %v", tool)
	}
	s.send(lines[3]) // tools/call
	resp := s.recv()
	if path(resp, "id") != float64(2) {
		t.Fatalf("id %v", resp["id"])
	}
	d := permission(t, resp)
	if d["behavior"] != "allow" {
		t.Fatalf("decision %v", d)
	}
	if got, _ := json.Marshal(d["updatedInput"]); string(got) != `{"command":"touch /tmp/rec/x2","description":"e2e command"}` {
		t.Errorf("updatedInput %s, want the original input", got)
	}
	s.close()
	calls, _ := f.recorded()
	// A shell call goes without a directory: Claude's shell keeps its own
	// between commands, and the request does not say which.
	if len(calls) != 1 || calls[0].Tool != "Bash" || calls[0].IdempotencyKey != "toolu_e2e_003" || calls[0].Agent != "claude-code" || calls[0].Cwd != "" {
		t.Fatalf("calls %+v", calls)
	}
}

// TestMCPFileToolKeepsItsDirectory: a file tool's call carries the
// directory the server started in (Claude's file paths are absolute; the
// project is that directory).
func TestMCPFileToolKeepsItsDirectory(t *testing.T) {
	f := &fakeDecider{answer: answerWith(apApproved)}
	s := NewMCPServer(f, Options{Agent: "claude-code", Cwd: "/home/dev/proj"}, "test")
	out := s.approve(context.Background(), json.RawMessage(`{"tool_name":"Write","input":{"file_path":"/home/dev/proj/a.go","content":"x"},"tool_use_id":"t1"}`))
	if out == nil {
		t.Fatal("no result")
	}
	calls, _ := f.recorded()
	if len(calls) != 1 || calls[0].Cwd != "/home/dev/proj" {
		t.Fatalf("calls %+v", calls)
	}
}

func TestMCPOutcomes(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"approve","arguments":{"tool_name":"Bash","input":{"command":"rm -rf /"},"tool_use_id":"toolu_9"}}}`
	tests := []struct {
		name      string
		line      string
		answer    func(context.Context, gate.Call) (*gate.Approval, error)
		behavior  string
		message   string
		interrupt bool
		calls     int
	}{
		{"denied", call, answerWith(apDeniedPerson), "deny", "use the staging branch", false, 1},
		{"denied stop interrupts", call, answerWith(apDeniedStop), "deny", "wrong repo", true, 1},
		{"expired", call, answerWith(apExpired), "deny", "expired", false, 1},
		{"unreachable", call, answerErr(errFakeUnreachable), "deny", "unreachable", false, 1},
		{"no tool_name", `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"approve","arguments":{"input":{}}}}`, answerWith(apApproved), "deny", "no tool_name", false, 0},
		{"input not an object", `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"approve","arguments":{"tool_name":"Bash","input":"ls"}}}`, answerWith(apApproved), "deny", "not a JSON object", false, 0},
		{"no arguments", `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"approve"}}`, answerWith(apApproved), "deny", "no tool_name", false, 0},
		{"arguments wrong type", `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"approve","arguments":{"tool_name":["Bash"],"input":{}}}}`, answerWith(apApproved), "deny", "could not read", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDecider{answer: tt.answer}
			s := startMCP(t, f, Options{IsUnreachable: isFakeUnreachable})
			s.send(tt.line)
			resp := s.recv()
			if resp["id"] != "c1" {
				t.Fatalf("id %v", resp["id"])
			}
			d := permission(t, resp)
			if d["behavior"] != tt.behavior || !strings.Contains(d["message"].(string), tt.message) {
				t.Errorf("decision %v, want %s with %q", d, tt.behavior, tt.message)
			}
			if _, ok := d["updatedInput"]; ok {
				t.Errorf("deny carries updatedInput: %v", d)
			}
			if got, _ := d["interrupt"].(bool); got != tt.interrupt {
				t.Errorf("interrupt %v", got)
			}
			s.close()
			if calls, _ := f.recorded(); len(calls) != tt.calls {
				t.Errorf("%d calls, want %d", len(calls), tt.calls)
			}
		})
	}
}

func TestMCPProtocolErrors(t *testing.T) {
	tests := []struct {
		name string
		line string
		id   any
		code float64
	}{
		{"parse error", `{"jsonrpc":"2.0","id":1,"method":`, nil, rpcParseError},
		{"not an object", `42`, nil, rpcInvalidRequest},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, rpcInvalidRequest},
		{"no jsonrpc", `{"id":3,"method":"ping"}`, float64(3), rpcInvalidRequest},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, nil, rpcInvalidRequest},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, nil, rpcInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","id":4,"method":5}`, nil, rpcInvalidRequest},
		{"no method", `{"jsonrpc":"2.0","id":5}`, float64(5), rpcInvalidRequest},
		{"unknown method", `{"jsonrpc":"2.0","id":6,"method":"resources/list"}`, float64(6), rpcMethodNotFound},
		{"unknown tool", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"exec","arguments":{}}}`, float64(7), rpcInvalidParams},
		{"bad tools/call params", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":[1]}`, float64(8), rpcInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDecider{answer: answerWith(apApproved)}
			s := startMCP(t, f, Options{})
			s.send(tt.line)
			resp := s.recv()
			if resp["id"] != tt.id || path(resp, "error.code") != tt.code {
				t.Errorf("got %v, want id %v code %v", resp, tt.id, tt.code)
			}
			if _, ok := resp["result"]; ok {
				t.Errorf("error response has a result: %v", resp)
			}
			s.close()
			if calls, _ := f.recorded(); len(calls) != 0 {
				t.Errorf("submitted %v", calls)
			}
		})
	}
}

func TestMCPPingAndNotifications(t *testing.T) {
	s := startMCP(t, &fakeDecider{answer: answerWith(apApproved)}, Options{})
	s.send(`{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`)
	s.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	// Notifications get no answer, so the first response is the ping's.
	resp := s.recv()
	if resp["id"] != "p" || resp["result"] == nil {
		t.Fatalf("ping: %v", resp)
	}
	s.send(`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}`)
	if v := path(s.recv(), "result.protocolVersion"); v != mcpProtocolVersions[0] {
		t.Errorf("unknown client version answered with %v, want our newest", v)
	}
	s.close()
}

// blockingDecider holds each call until the test releases it by tool_use_id.
func blockingDecider(release map[string]chan gate.Approval) *fakeDecider {
	f := &fakeDecider{waiting: make(chan gate.Call, 10)}
	f.answer = func(ctx context.Context, c gate.Call) (*gate.Approval, error) {
		select {
		case a := <-release[c.IdempotencyKey]:
			return &a, nil
		case <-ctx.Done():
			return &gate.Approval{ID: "ap-" + c.IdempotencyKey, Status: gate.StatusPending}, ctx.Err()
		}
	}
	return f
}

func mcpCall(id, toolUseID string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"approve","arguments":{"tool_name":"Bash","input":{"command":"make"},"tool_use_id":"` + toolUseID + `"}}}`
}

func TestMCPConcurrentCalls(t *testing.T) {
	release := map[string]chan gate.Approval{"t1": make(chan gate.Approval, 1), "t2": make(chan gate.Approval, 1)}
	f := blockingDecider(release)
	s := startMCP(t, f, Options{})
	s.send(mcpCall("1", "t1"))
	s.send(mcpCall("2", "t2"))
	<-f.waiting
	<-f.waiting
	// Both wait at once; a ping is still answered meanwhile.
	s.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if resp := s.recv(); resp["id"] != "p" {
		t.Fatalf("ping blocked behind calls: %v", resp)
	}
	release["t2"] <- apDeniedPerson
	if resp := s.recv(); resp["id"] != float64(2) || permission(t, resp)["behavior"] != "deny" {
		t.Fatalf("second call: %v", resp)
	}
	release["t1"] <- apApproved
	if resp := s.recv(); resp["id"] != float64(1) || permission(t, resp)["behavior"] != "allow" {
		t.Fatalf("first call: %v", resp)
	}
	s.close()
}

func TestMCPCancelledRequest(t *testing.T) {
	release := map[string]chan gate.Approval{"t1": make(chan gate.Approval, 1)}
	f := blockingDecider(release)
	s := startMCP(t, f, Options{})
	s.send(mcpCall("1", "t1"))
	<-f.waiting
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user pressed Esc"}}`)
	// The cancelled request gets no answer; the ping's is the next line.
	s.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if resp := s.recv(); resp["id"] != "p" {
		t.Fatalf("got %v, want only the ping's answer", resp)
	}
	s.close() // no answer for request 1 either
	if _, cancels := f.recorded(); len(cancels) != 1 || cancels[0] != "ap-t1" {
		t.Fatalf("cancels %v, want [ap-t1]", cancels)
	}
}

func TestMCPEOFWithdrawsInflight(t *testing.T) {
	release := map[string]chan gate.Approval{"t1": make(chan gate.Approval, 1)}
	f := blockingDecider(release)
	s := startMCP(t, f, Options{})
	s.send(mcpCall(`"x"`, "t1"))
	<-f.waiting
	s.close()
	if _, cancels := f.recorded(); len(cancels) != 1 {
		t.Fatalf("cancels %v", cancels)
	}
}

func TestMCPDuplicateInflightID(t *testing.T) {
	release := map[string]chan gate.Approval{"t1": make(chan gate.Approval, 1)}
	f := blockingDecider(release)
	s := startMCP(t, f, Options{})
	s.send(mcpCall("1", "t1"))
	<-f.waiting
	s.send(mcpCall("1", "t1"))
	if resp := s.recv(); resp["id"] != float64(1) || path(resp, "error.code") != float64(rpcInvalidRequest) {
		t.Fatalf("duplicate id: %v", resp)
	}
	release["t1"] <- apApproved
	if resp := s.recv(); permission(t, resp)["behavior"] != "allow" {
		t.Fatalf("first call: %v", resp)
	}
	s.close()
}

func TestMCPLongLine(t *testing.T) {
	s := startMCP(t, &fakeDecider{answer: answerWith(apApproved)}, Options{})
	go func() {
		// A line over the limit, written while the test reads.
		io.WriteString(s.in, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+strings.Repeat("a", maxMCPLine)+`"}}`+"\n")
		io.WriteString(s.in, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	}()
	if resp := s.recv(); resp["id"] != nil || path(resp, "error.code") != float64(rpcParseError) {
		t.Fatalf("long line: %v", resp)
	}
	if resp := s.recv(); resp["id"] != float64(2) {
		t.Fatalf("after long line: %v", resp)
	}
	s.close()
}

package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedHookPayloads adds every recorded hook payload and some broken ones.
func seedHookPayloads(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	for _, s := range []string{"", "null", "{}", "[]", `{"tool_name":"Bash"}`, `{"tool_name":"Bash","tool_input":null}`,
		`{"tool_name":"Bash","tool_input":{"command":"ls"}}{"x":1}`, `{"tool_name":"Bash","tool_name":""}`, "\xff\xfe{"} {
		f.Add([]byte(s))
	}
}

// FuzzClaudeHook: whatever arrives on stdin, the hook does not panic,
// writes one JSON object (or exits 2), and allows only what parsed, even
// with a daemon that approves everything.
func FuzzClaudeHook(f *testing.F) {
	seedHookPayloads(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, parseErr := parseHookInput(bytes.NewReader(data))
		d := &fakeDecider{answer: answerWith(apApproved)}
		var stdout, stderr bytes.Buffer
		code := RunClaudeHook(context.Background(), d, Options{}, bytes.NewReader(data), &stdout, &stderr)
		if code == 2 {
			if stdout.Len() != 0 {
				t.Fatalf("exit 2 with stdout %q", stdout.String())
			}
			return
		}
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		var out claudeOutput
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("stdout not JSON: %v", err)
		}
		allowed := out.HookSpecificOutput != nil && (out.HookSpecificOutput.PermissionDecision == "allow" ||
			out.HookSpecificOutput.Decision != nil && out.HookSpecificOutput.Decision.Behavior == "allow")
		if parseErr != nil && allowed {
			t.Fatalf("allow for input that failed to parse (%v): %q", parseErr, data)
		}
		if parseErr != nil && (out.HookSpecificOutput == nil || out.HookSpecificOutput.PermissionDecision != "deny") {
			t.Fatalf("unparsable input did not get a PreToolUse deny: %s", stdout.String())
		}
	})
}

// FuzzCodexHook: no panic, never an allow for input that fails to parse,
// never an ask, and a deny always exits 2 with a reason on stderr.
func FuzzCodexHook(f *testing.F) {
	seedHookPayloads(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, parseErr := parseHookInput(bytes.NewReader(data))
		d := &fakeDecider{answer: answerWith(apApproved)}
		var stdout, stderr bytes.Buffer
		code := RunCodexHook(context.Background(), d, Options{}, bytes.NewReader(data), &stdout, &stderr)
		if parseErr != nil && code != 2 {
			t.Fatalf("exit %d for input that failed to parse (%v)", code, parseErr)
		}
		if code == 2 && strings.TrimSpace(stderr.String()) == "" {
			t.Fatal("exit 2 without a reason on stderr (Codex would not block)")
		}
		if strings.Contains(stdout.String(), `"ask"`) {
			t.Fatalf("Codex answer with ask: %s", stdout.String())
		}
	})
}

// FuzzMCPMessage: one message line of any content never panics the server,
// every output line is a JSON-RPC response, and an allow comes only from a
// well-formed tools/call of the approve tool.
func FuzzMCPMessage(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "mcp_claude_2.1.330_session.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f.Add([]byte(line))
		f.Add([]byte(line[:len(line)/2]))
	}
	for _, s := range []string{"", "{}", "[]", "null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"approve","arguments":{"tool_name":"Bash","input":[]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"approve","arguments":{"tool_name":"Bash","input":{}}},"id":2}`,
		`{"jsonrpc":"2.0","id":1.5e3,"method":"tools/call","params":{"name":"approve","arguments":{"tool_name":"B","input":{"a":1}}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		line := bytes.ReplaceAll(data, []byte("\n"), []byte(" "))
		d := &fakeDecider{answer: answerWith(apApproved)}
		var out bytes.Buffer
		srv := NewMCPServer(d, Options{}, "fuzz")
		if err := srv.Serve(context.Background(), io.MultiReader(bytes.NewReader(line), strings.NewReader("\n")), &out); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		for _, l := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  *struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
				Error *rpcError `json:"error"`
			}
			if err := json.Unmarshal(l, &resp); err != nil || resp.JSONRPC != "2.0" || resp.ID == nil {
				t.Fatalf("bad response line %q: %v", l, err)
			}
			if resp.Result == nil || len(resp.Result.Content) == 0 || !strings.Contains(resp.Result.Content[0].Text, `"allow"`) {
				continue
			}
			// An allow: the request must have been a well-formed approve call.
			var req struct {
				Method string `json:"method"`
				Params struct {
					Name      string      `json:"name"`
					Arguments approveArgs `json:"arguments"`
				} `json:"params"`
			}
			if err := json.Unmarshal(line, &req); err != nil || req.Method != "tools/call" || req.Params.Name != MCPToolName ||
				req.Params.Arguments.ToolName == "" || !bytes.HasPrefix(bytes.TrimSpace(req.Params.Arguments.Input), []byte("{")) {
				t.Fatalf("allow for a request that does not parse as an approve call (%v): %q", err, line)
			}
		}
	})
}

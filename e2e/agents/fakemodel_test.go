package agentse2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFakeModelProtocols: each API asks for the shell tool on a marked
// prompt, with the command in the schema's shape, and records the result.
func TestFakeModelProtocols(t *testing.T) {
	tests := []struct {
		name, path, first, second, wantCall, wantResult string
	}{
		{"chat streamed", "/v1/chat/completions",
			`{"stream":true,"messages":[{"role":"user","content":"APPROVALBOT_E2E_RUN[[touch \"a b\"]]"}],"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command","description"]}}}]}`,
			`{"stream":true,"messages":[{"role":"user","content":"APPROVALBOT_E2E_RUN[[x]]"},{"role":"tool","tool_call_id":"c","content":"denied: no"}],"tools":[{"type":"function","function":{"name":"bash"}}]}`,
			`\"command\":\"touch \\\"a b\\\"\"`, "denied: no"},
		{"responses", "/v1/responses",
			`{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"APPROVALBOT_E2E_RUN[[ls]]"}]}],"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}]}`,
			`{"input":[{"type":"function_call_output","call_id":"c","output":"blocked"}],"tools":[{"type":"function","name":"exec_command"}]}`,
			`"arguments":"{\"cmd\":\"ls\"}"`, "blocked"},
		{"gemini", "/v1beta/models/m:streamGenerateContent",
			`{"contents":[{"role":"user","parts":[{"text":"APPROVALBOT_E2E_RUN[[ls]]"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command","parametersJsonSchema":{"type":"object","properties":{"command":{"type":"string"}}}}]}]}`,
			`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"error":"blocked"}}}]}]}`,
			`"functionCall":{"args":{"command":"ls"},"name":"run_shell_command"}`, `{"error":"blocked"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFakeModel()
			srv := httptest.NewServer(f)
			defer srv.Close()
			post := func(body string) string {
				resp, err := http.Post(srv.URL+tt.path, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var b strings.Builder
				buf := make([]byte, 4096)
				for {
					n, err := resp.Body.Read(buf)
					b.Write(buf[:n])
					if err != nil {
						break
					}
				}
				return b.String()
			}
			if out := post(tt.first); !strings.Contains(out, tt.wantCall) {
				t.Errorf("first answer lacks %s:\n%s", tt.wantCall, out)
			}
			post(tt.second)
			if r := f.ToolResults(); len(r) != 1 || r[0] != tt.wantResult {
				t.Errorf("results %q, want [%q]", r, tt.wantResult)
			}
		})
	}
	// A JSON-schema request (Gemini's router and next-speaker checks) gets JSON.
	var v map[string]any
	if err := json.Unmarshal(mustJSON(fromSchema(json.RawMessage(`{"type":"object","properties":{"next_speaker":{"type":"string","enum":["model","user"]}}}`))), &v); err != nil || v["next_speaker"] != "user" {
		t.Errorf("fromSchema: %v %v", v, err)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

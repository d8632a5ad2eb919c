// Command minhook is the floor for the hook latency benchmark: the least a
// Go hook must do, stdin → one POST /v1/calls → stdout, with no flags,
// logging, retries or parent watching. Not part of approvalbot.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		os.Exit(2)
	}
	var in struct {
		SessionID string          `json:"session_id"`
		Cwd       string          `json:"cwd"`
		ToolName  string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
		ToolUseID string          `json:"tool_use_id"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		os.Exit(2)
	}
	body, _ := json.Marshal(map[string]any{"agent": "claude-code", "session_id": in.SessionID, "tool": in.ToolName,
		"input": in.ToolInput, "cwd": in.Cwd, "idempotency_key": in.ToolUseID})
	resp, err := http.Post(os.Getenv("APPROVALBOT_URL")+"/v1/calls", "application/json", bytes.NewReader(body))
	if err != nil {
		os.Exit(2)
	}
	defer resp.Body.Close()
	var out struct {
		Decision string `json:"decision"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Decision != "allow" {
		out.Decision = "deny"
	}
	fmt.Printf(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":%q}}`+"\n", out.Decision)
}

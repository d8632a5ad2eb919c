// Package claudee2e runs the real Claude Code CLI against approvalbot: a
// local fake of the Anthropic Messages API makes the model ask for one Bash
// call, and the PreToolUse hook (`approvalbot hook claude`) decides it
// through a real `approvalbot serve`. The test itself needs the build tag
// e2e and a Claude Code install (setup.sh); the fake is ordinary code with
// its own unit test.
package claudee2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// runMarker in the user's prompt tells the fake model which Bash command to
// ask for: APPROVALBOT_E2E_RUN[[command]].
var runMarker = regexp.MustCompile(`APPROVALBOT_E2E_RUN\[\[(.*?)\]\]`)

// ToolResult is a tool_result block the fake model received.
type ToolResult struct {
	ToolUseID string
	Content   string
	IsError   bool
}

// FakeAnthropic answers POST /v1/messages like the Anthropic Messages API
// (streamed or not): a prompt carrying runMarker gets a tool_use of Bash with
// that command; a request carrying a tool_result gets a final text answer
// and the result is recorded.
type FakeAnthropic struct {
	mu      sync.Mutex
	results []ToolResult
	n       int
	log     []string
}

// NewFakeAnthropic returns an empty fake.
func NewFakeAnthropic() *FakeAnthropic { return &FakeAnthropic{} }

// ToolResults returns the tool_result blocks received so far.
func (f *FakeAnthropic) ToolResults() []ToolResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ToolResult(nil), f.results...)
}

// Log returns one line per request, for failure messages.
func (f *FakeAnthropic) Log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.log, "\n")
}

type messagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// blocks returns a message's content as blocks (a string is one text block).
func blocks(raw json.RawMessage) []block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// text returns a tool_result's content as text.
func (b block) text() string {
	var parts []string
	for _, c := range blocks(b.Content) {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

func (f *FakeAnthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		writeJSON(w, map[string]any{"input_tokens": 42})
		return
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	default:
		f.note(fmt.Sprintf("%s %s -> 404", r.Method, r.URL.Path))
		w.WriteHeader(http.StatusNotFound)
		writeJSON(w, map[string]any{"type": "error", "error": map[string]any{"type": "not_found_error", "message": "not here"}})
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": err.Error()}})
		return
	}
	hasBash := false
	for _, t := range req.Tools {
		hasBash = hasBash || t.Name == "Bash"
	}
	// Several markers are several Bash calls, one after another: the next
	// once the previous one's tool_result is in the conversation.
	var commands []string
	var result *ToolResult
	results := 0
	for _, m := range req.Messages {
		for _, b := range blocks(m.Content) {
			if m.Role != "user" {
				continue
			}
			if b.Type == "tool_result" {
				result = &ToolResult{ToolUseID: b.ToolUseID, Content: b.text(), IsError: b.IsError}
				results++
			}
			if mm := runMarker.FindAllStringSubmatch(b.Text, -1); mm != nil && commands == nil {
				for _, c := range mm {
					commands = append(commands, c[1])
				}
			}
		}
	}
	command := ""
	if results < len(commands) {
		command = commands[results]
	}
	f.mu.Lock()
	f.n++
	id := f.n
	if result != nil {
		f.results = append(f.results, *result)
		f.log = append(f.log, fmt.Sprintf("request %d: tool_result %q error=%v", id, result.Content, result.IsError))
	}
	switch {
	case command != "" && hasBash:
		f.log = append(f.log, fmt.Sprintf("request %d: tool_use Bash %q", id, command))
	case result == nil:
		f.log = append(f.log, fmt.Sprintf("request %d: text (tools %d, stream %v)", id, len(req.Tools), req.Stream))
	}
	f.mu.Unlock()

	switch {
	case command != "" && hasBash:
		in, _ := json.Marshal(map[string]string{"command": command, "description": "e2e command"})
		f.answer(w, req, id, toolUseBlock(fmt.Sprintf("toolu_e2e_%03d", id), "Bash", string(in)), "tool_use")
	case result != nil:
		f.answer(w, req, id, textBlock("finished; the tool said: "+result.Content), "end_turn")
	default:
		f.answer(w, req, id, textBlock("ok"), "end_turn")
	}
}

func (f *FakeAnthropic) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, s)
}

// contentBlock is one block of the answer: its start form, and for streaming
// the delta that fills it.
type contentBlock struct {
	start map[string]any
	full  map[string]any
	delta map[string]any
}

func textBlock(s string) contentBlock {
	return contentBlock{
		start: map[string]any{"type": "text", "text": ""},
		full:  map[string]any{"type": "text", "text": s},
		delta: map[string]any{"type": "text_delta", "text": s},
	}
}

func toolUseBlock(id, name, inputJSON string) contentBlock {
	var input any
	_ = json.Unmarshal([]byte(inputJSON), &input)
	return contentBlock{
		start: map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}},
		full:  map[string]any{"type": "tool_use", "id": id, "name": name, "input": input},
		delta: map[string]any{"type": "input_json_delta", "partial_json": inputJSON},
	}
}

func (f *FakeAnthropic) answer(w http.ResponseWriter, req messagesRequest, id int, b contentBlock, stop string) {
	msgID := fmt.Sprintf("msg_e2e_%03d", id)
	model := req.Model
	if model == "" {
		model = "claude-e2e"
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		writeJSON(w, map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{b.full}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	events := []map[string]any{
		{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}},
		{"type": "content_block_start", "index": 0, "content_block": b.start},
		{"type": "content_block_delta", "index": 0, "delta": b.delta},
		{"type": "content_block_stop", "index": 0},
		{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}},
		{"type": "message_stop"},
	}
	fl, _ := w.(http.Flusher)
	for _, ev := range events {
		data, _ := json.Marshal(ev)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], data)
		if fl != nil {
			fl.Flush()
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	_ = json.NewEncoder(w).Encode(v)
}

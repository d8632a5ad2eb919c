// Package agentse2e runs real coding-agent CLIs (Codex, Gemini CLI,
// opencode, GitHub Copilot CLI), installed from npm by the test, against
// approvalbot: each agent is set up with `approvalbot install`, and a fake
// model server on loopback makes it call its own shell tool once. The tests
// need the build tag e2e; the fake is ordinary code with its own unit test.
package agentse2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// runMarker in the user's prompt tells the fake model which shell command to
// ask for: APPROVALBOT_E2E_RUN[[command]]. Several markers are several
// calls, one after another: the next comes once the previous one's result
// is in the conversation.
var runMarker = regexp.MustCompile(`APPROVALBOT_E2E_RUN\[\[(.*?)\]\]`)

// workdirMarker in the prompt sets the directory argument of the calls, for
// shell tools that take one: APPROVALBOT_E2E_WORKDIR[[dir]].
var workdirMarker = regexp.MustCompile(`APPROVALBOT_E2E_WORKDIR\[\[(.*?)\]\]`)

// workdirProps are the shell tools' directory arguments.
var workdirProps = []string{"workdir", "dir_path", "cwd", "directory"}

// workdir returns the workdirMarker's directory in a request body, if any.
func workdir(body []byte) string {
	if m := workdirMarker.FindSubmatch(body); m != nil {
		return string(m[1])
	}
	return ""
}

// shellTools are the agents' shell tools, in order of preference.
var shellTools = []string{"exec_command", "shell", "run_shell_command", "bash"}

// FakeModel speaks, on one handler, the model APIs of the agents under test:
// the OpenAI Responses API streamed (Codex), OpenAI Chat Completions,
// streamed or not (opencode, Copilot CLI), and the Gemini API's
// generateContent / streamGenerateContent / countTokens (Gemini CLI). A
// request that offers tools and carries runMarker but no tool result gets
// one call of the agent's shell tool with that command; a request that
// carries a tool result gets a final text, and the result is recorded; any
// other request (titles, routers, checks) gets a short text or JSON answer.
type FakeModel struct {
	mu      sync.Mutex
	results []string
	log     []string
	n       int
}

// NewFakeModel returns a fake with nothing recorded.
func NewFakeModel() *FakeModel { return &FakeModel{} }

// ToolResults returns the tool results the model received, as text.
func (f *FakeModel) ToolResults() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.results...)
}

// Log returns one line per request, for failure messages.
func (f *FakeModel) Log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.log, "\n")
}

func (f *FakeModel) logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, fmt.Sprintf(format, args...))
}

func (f *FakeModel) record(result string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results = append(f.results, result)
}

func (f *FakeModel) nextID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	// A per-fake prefix: ids must not repeat across runs of the same agent
	// (approvalbot binds an idempotency key to one call).
	return fmt.Sprintf("call_e2e%d_%d", time.Now().UnixNano()%1e9, f.n)
}

func (f *FakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	f.logf("%s %s %d bytes", r.Method, r.URL.String(), len(body))
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{"id": "fake-model", "object": "model", "owned_by": "e2e"}},
			"models": []any{}})
	case strings.HasSuffix(p, "/responses"):
		f.responses(w, body)
	case strings.HasSuffix(p, "/chat/completions"):
		f.chat(w, body)
	case strings.Contains(p, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 10})
	case strings.Contains(p, ":streamGenerateContent"), strings.Contains(p, ":generateContent"):
		f.gemini(w, body, strings.Contains(p, ":streamGenerateContent"))
	default:
		f.logf("  unhandled")
		http.Error(w, `{"error":{"message":"not faked"}}`, http.StatusNotFound)
	}
}

// command returns the marker's command in a request body, if any.
func command(body []byte, done int) (string, bool) {
	ms := runMarker.FindAllSubmatch(body, -1)
	// The prompt may be in the request more than once (a system reminder
	// repeating it): the markers of its first copy count.
	seen := map[string]bool{}
	var cmds [][]byte
	for _, m := range ms {
		if seen[string(m[1])] {
			break
		}
		seen[string(m[1])] = true
		cmds = append(cmds, m[1])
	}
	if done >= len(cmds) {
		return "", false
	}
	m := cmds[done]
	// The marker sits inside a JSON string: undo its escaping.
	var s string
	if json.Unmarshal([]byte(`"`+string(m)+`"`), &s) != nil {
		return string(m), true
	}
	return s, true
}

// toolArgs fills a shell tool's arguments from its JSON schema: the command
// (a string, or argv for an array), a description, and every other required
// field with a plain value.
func toolArgs(schema json.RawMessage, cmd, dir string) string {
	var s struct {
		Properties map[string]struct {
			Type any      `json:"type"`
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	args := map[string]any{}
	typeOf := func(t any) string {
		switch x := t.(type) {
		case string:
			return x
		case []any:
			if len(x) > 0 {
				s, _ := x[0].(string)
				return s
			}
		}
		return "string"
	}
	set := func(name string) {
		prop := s.Properties[name]
		switch {
		case name == "command" || name == "cmd":
			if typeOf(prop.Type) == "array" {
				args[name] = []string{"bash", "-lc", cmd}
			} else {
				args[name] = cmd
			}
		case len(prop.Enum) > 0:
			args[name] = prop.Enum[0]
		case typeOf(prop.Type) == "number" || typeOf(prop.Type) == "integer":
			args[name] = 30
		case typeOf(prop.Type) == "boolean":
			args[name] = false
		case typeOf(prop.Type) == "object":
			args[name] = map[string]any{}
		case typeOf(prop.Type) == "array":
			args[name] = []any{}
		default:
			args[name] = "approvalbot e2e step"
		}
	}
	if _, ok := s.Properties["cmd"]; ok {
		set("cmd")
	} else {
		set("command")
	}
	if _, ok := s.Properties["description"]; ok {
		set("description")
	}
	if dir != "" {
		for _, name := range workdirProps {
			if _, ok := s.Properties[name]; ok {
				args[name] = dir
			}
		}
	}
	for _, r := range s.Required {
		if _, done := args[r]; !done {
			set(r)
		}
	}
	b, _ := json.Marshal(args)
	return string(b)
}

// pickTool returns the shell tool among the offered ones, and its schema.
func pickTool(offered map[string]json.RawMessage) (string, json.RawMessage, bool) {
	for _, name := range shellTools {
		if schema, ok := offered[name]; ok {
			return name, schema, true
		}
	}
	return "", nil, false
}

// --- OpenAI Responses API (Codex) ---

func (f *FakeModel) responses(w http.ResponseWriter, body []byte) {
	var req struct {
		Input []json.RawMessage `json:"input"`
		Tools []struct {
			Type       string          `json:"type"`
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &req)
	offered := map[string]json.RawMessage{}
	for _, t := range req.Tools {
		if t.Type == "function" {
			offered[t.Name] = t.Parameters
		}
	}
	var result *string
	results := 0
	for _, it := range req.Input {
		var item struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		}
		_ = json.Unmarshal(it, &item)
		if item.Type == "function_call_output" || item.Type == "custom_tool_call_output" {
			s := textOf(item.Output)
			result = &s
			results++
		}
	}
	var items []map[string]any
	cmd, hasCmd := command(body, results)
	tool, schema, hasTool := pickTool(offered)
	if result != nil {
		f.record(*result)
		f.logf("  tool result: %.200q", *result)
	}
	switch {
	case hasCmd && hasTool:
		args := toolArgs(schema, cmd, workdir(body))
		f.logf("  tool call %s %s", tool, args)
		items = append(items, map[string]any{"type": "function_call", "id": "fc_" + f.nextID(), "call_id": f.nextID(), "name": tool, "arguments": args, "status": "completed"})
	case result != nil:
		items = append(items, responsesText("Done."))
	default:
		items = append(items, responsesText("OK."))
	}
	id := "resp_" + f.nextID()
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	for i, it := range items {
		sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": it})
		sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "output": items,
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 5,
			"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}})
}

func responsesText(text string) map[string]any {
	return map[string]any{"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
}

// --- OpenAI Chat Completions (opencode, Copilot CLI) ---

func (f *FakeModel) chat(w http.ResponseWriter, body []byte) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &req)
	offered := map[string]json.RawMessage{}
	for _, t := range req.Tools {
		offered[t.Function.Name] = t.Function.Parameters
	}
	var result *string
	results := 0
	for _, m := range req.Messages {
		if m.Role == "tool" {
			s := textOf(m.Content)
			result = &s
			results++
		}
	}
	cmd, hasCmd := command(body, results)
	tool, schema, hasTool := pickTool(offered)
	var text string
	var call map[string]any
	if result != nil {
		f.record(*result)
		f.logf("  tool result: %.200q", *result)
	}
	switch {
	case hasCmd && hasTool:
		args := toolArgs(schema, cmd, workdir(body))
		f.logf("  tool call %s %s", tool, args)
		call = map[string]any{"index": 0, "id": f.nextID(), "type": "function", "function": map[string]any{"name": tool, "arguments": args}}
	case result != nil:
		text = "Done."
	default:
		text = "OK"
	}
	id, created := "chatcmpl-"+f.nextID(), time.Now().Unix()
	finish := "stop"
	if call != nil {
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": text}
		if call != nil {
			delete(call, "index")
			msg["content"] = nil
			msg["tool_calls"] = []any{call}
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any, usage any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		sse(w, "", c)
	}
	if call != nil {
		chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}, nil, nil)
	} else {
		chunk(map[string]any{"role": "assistant", "content": text}, nil, nil)
	}
	chunk(map[string]any{}, finish, usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// --- Gemini API (Gemini CLI) ---

func (f *FakeModel) gemini(w http.ResponseWriter, body []byte, stream bool) {
	var req struct {
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name                 string          `json:"name"`
				Parameters           json.RawMessage `json:"parameters"`
				ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig struct {
			ResponseMimeType   string          `json:"responseMimeType"`
			ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
			ResponseSchema     json.RawMessage `json:"responseSchema"`
		} `json:"generationConfig"`
	}
	_ = json.Unmarshal(body, &req)
	offered := map[string]json.RawMessage{}
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			s := d.ParametersJSONSchema
			if len(s) == 0 {
				s = d.Parameters
			}
			offered[d.Name] = lowerTypes(s)
		}
	}
	var result *string
	results := 0
	for i, c := range req.Contents {
		for _, part := range c.Parts {
			if part.FunctionResponse == nil {
				continue
			}
			results++
			if i == len(req.Contents)-1 {
				// Only the latest turn is a new result.
				s := textOf(part.FunctionResponse.Response)
				result = &s
			}
		}
	}
	cmd, hasCmd := command(body, results)
	tool, schema, hasTool := pickTool(offered)
	var part map[string]any
	switch {
	case req.GenerationConfig.ResponseMimeType == "application/json":
		schema := req.GenerationConfig.ResponseJSONSchema
		if len(schema) == 0 {
			schema = lowerTypes(req.GenerationConfig.ResponseSchema)
		}
		b, _ := json.Marshal(fromSchema(schema))
		f.logf("  json answer %s", b)
		part = map[string]any{"text": string(b)}
	case hasCmd && hasTool:
		if result != nil {
			f.record(*result)
			f.logf("  tool result: %.200q", *result)
		}
		var args map[string]any
		_ = json.Unmarshal([]byte(toolArgs(schema, cmd, workdir(body))), &args)
		f.logf("  tool call %s %v", tool, args)
		part = map[string]any{"functionCall": map[string]any{"name": tool, "args": args}}
	case result != nil:
		f.record(*result)
		f.logf("  tool result: %.200q", *result)
		part = map[string]any{"text": "Done."}
	default:
		part = map[string]any{"text": "OK."}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-2.5-pro",
	}
	if !stream {
		writeJSON(w, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "", resp)
}

// fromSchema builds a small value that satisfies a JSON schema (objects
// with their required properties, the first enum value; a next_speaker
// choice says "user", so Gemini CLI ends its turn).
func fromSchema(raw json.RawMessage) any {
	var s struct {
		Type       any                        `json:"type"`
		Enum       []any                      `json:"enum"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Items      json.RawMessage            `json:"items"`
	}
	_ = json.Unmarshal(raw, &s)
	if len(s.Enum) > 0 {
		for _, e := range s.Enum {
			if e == "user" {
				return e
			}
		}
		return s.Enum[0]
	}
	t, _ := s.Type.(string)
	switch strings.ToLower(t) {
	case "object", "":
		out := map[string]any{}
		for name, p := range s.Properties {
			out[name] = fromSchema(p)
		}
		return out
	case "array":
		return []any{}
	case "number", "integer":
		return 1
	case "boolean":
		return false
	}
	return "fake"
}

// lowerTypes turns the Gemini API's upper-case schema types ("OBJECT")
// into JSON Schema's.
func lowerTypes(raw json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "type" {
					if s, ok := e.(string); ok {
						x[k] = strings.ToLower(s)
						continue
					}
				}
				x[k] = walk(e)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return v
	}
	b, _ := json.Marshal(walk(v))
	return b
}

// textOf flattens a tool result (a string, or any JSON) to text.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func sse(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

package claudee2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestFakeAnthropicStreamsToolUse(t *testing.T) {
	f := NewFakeAnthropic()
	srv := httptest.NewServer(f)
	defer srv.Close()
	resp := post(t, srv.URL, `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[{"type":"text","text":"do APPROVALBOT_E2E_RUN[[touch /tmp/x]]"}]}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var types []string
	var partial string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string `json:"type"`
			ContentBlock struct {
				Type, Name string
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		if ev.Type == "content_block_start" && (ev.ContentBlock.Type != "tool_use" || ev.ContentBlock.Name != "Bash") {
			t.Errorf("block %+v", ev.ContentBlock)
		}
		if ev.Type == "content_block_delta" {
			partial = ev.Delta.PartialJSON
		}
		if ev.Type == "message_delta" && ev.Delta.StopReason != "tool_use" {
			t.Errorf("stop_reason %q", ev.Delta.StopReason)
		}
	}
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(partial), &in); err != nil || in["command"] != "touch /tmp/x" {
		t.Fatalf("input %q: %v", partial, err)
	}
}

func TestFakeAnthropicRecordsToolResult(t *testing.T) {
	f := NewFakeAnthropic()
	srv := httptest.NewServer(f)
	defer srv.Close()
	resp := post(t, srv.URL, `{"model":"m","stream":false,"messages":[
	  {"role":"user","content":"APPROVALBOT_E2E_RUN[[mkdir d]]"},
	  {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"mkdir d"}}]},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":[{"type":"text","text":"approvalbot: denied by rule"}]}]}]}`)
	var msg struct {
		Content    []struct{ Type, Text string }
		StopReason string `json:"stop_reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != "end_turn" || len(msg.Content) != 1 || !strings.Contains(msg.Content[0].Text, "denied by rule") {
		t.Fatalf("answer %+v", msg)
	}
	rs := f.ToolResults()
	if len(rs) != 1 || rs[0] != (ToolResult{ToolUseID: "toolu_1", Content: "approvalbot: denied by rule", IsError: true}) {
		t.Fatalf("results %+v", rs)
	}
}

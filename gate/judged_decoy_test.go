package gate

import (
	"encoding/json"
	"testing"
)

// TestJudgedWriteShowsNoDecoy: a write tool's input whose text fields
// could show the person something other than what the tool writes (a decoy
// old_string beside Gemini's content, Copilot's file_text beside a decoy
// content, opencode's oldString) is shown raw and whole (round 17).
func TestJudgedWriteShowsNoDecoy(t *testing.T) {
	for _, tt := range []struct {
		input    string
		rendered bool // a diff, a content or a patch is shown
	}{
		{`{"file_path":"a.go","content":"x"}`, true},
		{`{"file_path":"a.go","old_string":"a","new_string":"b"}`, true},
		{`{"file_path":"a.go","edits":[{"old_string":"a","new_string":"b"}]}`, true},
		{`{"file_path":"a.go","old_string":"a","new_string":"b","replace_all":false}`, true},
		{`{"file_path":"a.go","content":"rm -rf ~","old_string":"a","new_string":"b"}`, false},
		{`{"path":"a.go","file_text":"evil","content":"harmless"}`, false},
		{`{"filePath":"a.go","oldString":"x","newString":"evil","old_string":"a","new_string":"b"}`, false},
		{`{"file_path":"a.go","old_string":"a","new_string":"b","replace_all":true}`, false},
		{`{"file_path":"a.go","edits":[{"old_string":"a","new_string":"b","replace_all":true}]}`, false},
		{`{"file_path":"a.go","old_string":"a","new_string":"b","expected_replacements":2}`, false},
		{`{"notebook_path":"a.ipynb","new_source":"x","content":"decoy"}`, false},
		{`{"notebook_path":"a.ipynb","cell_id":"c","new_source":"","edit_mode":"delete"}`, false},
		{`{"notebook_path":"a.ipynb","cell_id":"c","new_source":"x","edit_mode":"replace"}`, true},
	} {
		in, ok := decodeInput(json.RawMessage(tt.input))
		if !ok {
			t.Fatalf("decode %s", tt.input)
		}
		j := judgeInput(KindWrite, Call{Tool: "Write", Input: json.RawMessage(tt.input), Cwd: "/p"}, in, "/h")
		if got := len(j.Edits) > 0 || j.Content != nil || j.Patch != ""; got != tt.rendered {
			t.Errorf("%s: rendered=%v, want %v", tt.input, got, tt.rendered)
		}
	}
}

package slack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// cbOf turns a payload map into the callback slack-go would parse.
func cbOf(t *testing.T, payload map[string]any) *slack.InteractionCallback {
	t.Helper()
	raw, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal(raw, &cb); err != nil {
		t.Fatal(err)
	}
	return &cb
}

// blockTexts returns every text of a blocks JSON document, one per line.
func blockTexts(t *testing.T, blocksJSON string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(blocksJSON), &v); err != nil {
		t.Fatalf("blocks %s: %v", blocksJSON, err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x["text"].(string); ok {
				out = append(out, s)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return strings.Join(out, "\n")
}

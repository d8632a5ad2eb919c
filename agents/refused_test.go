package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"approvalbot/api"
	"approvalbot/gate"
	"approvalbot/store"
)

// approverToken is the person's token on realDaemon.
const approverToken = "approver-token-0123456789"

// realDaemon serves a real gate (every Bash call asks) over the real API
// on an open loopback listener and returns the agent's client (no token).
func realDaemon(t *testing.T) (agent, person *api.Client) {
	t.Helper()
	p, err := gate.Compile(gate.PolicySpec{File: "test.jsonc", Rules: []gate.RuleSpec{
		{Tool: "*", Pattern: "*", Action: gate.Ask, File: "test.jsonc", Line: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "approvalbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := gate.New(gate.Config{}, p, st, nil)
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api.NewServer(api.Config{Open: true, AdminTokens: map[string]string{approverToken: "ana"}}, g, nil))
	t.Cleanup(func() { ts.Close(); g.Close(); st.Close() })
	return api.NewClient(ts.URL, "", api.WithPollWait(0)), api.NewClient(ts.URL, approverToken)
}

// TestAdaptersDenyRefusedCalls: a call the daemon refuses (an input with
// case-variant keys: 400; an idempotency key already bound to another
// call: 409) is a deny in every adapter, with a reason that tells the
// model why, and is never retried into a decision.
func TestAdaptersDenyRefusedCalls(t *testing.T) {
	const key = "toolu_reused"
	refusals := []struct {
		name   string
		input  string
		key    string
		reason string
	}{
		{"case-variant keys", `{"command":"ls","Command":"rm -rf ~"}`, "toolu_fresh", "differ only in case"},
		{"duplicate keys", `{"command":"ls","command":"rm -rf ~"}`, "toolu_fresh", "twice"},
		{"key bound to another call", `{"command":"dropdb production"}`, key, "reuses the id"},
	}
	adapters := []struct {
		name string
		run  func(t *testing.T, c *api.Client, input, key string) (action, reason string)
	}{
		{"claude", func(t *testing.T, c *api.Client, input, key string) (string, string) {
			payload := fmt.Sprintf(`{"session_id":"s1","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":%s,"tool_use_id":%q}`, input, key)
			var out, errOut bytes.Buffer
			RunClaudeHook(context.Background(), c, Options{Agent: "claude"}, strings.NewReader(payload), &out, &errOut)
			m := decodeOutput(t, out.Bytes())
			a, _ := path(m, "hookSpecificOutput.permissionDecision").(string)
			r, _ := path(m, "hookSpecificOutput.permissionDecisionReason").(string)
			return a, r
		}},
		{"codex", func(t *testing.T, c *api.Client, input, key string) (string, string) {
			payload := fmt.Sprintf(`{"session_id":"s1","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":%s,"tool_use_id":%q}`, input, key)
			var out, errOut bytes.Buffer
			if code := RunCodexHook(context.Background(), c, Options{Agent: "claude"}, strings.NewReader(payload), &out, &errOut); code != 2 {
				return fmt.Sprintf("exit %d", code), errOut.String()
			}
			return "deny", errOut.String()
		}},
		{"mcp", func(t *testing.T, c *api.Client, input, key string) (string, string) {
			s := startMCP(t, c, Options{Agent: "claude", Cwd: "/p"})
			defer s.close()
			s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"approve","arguments":{"tool_name":"Bash","input":%s,"tool_use_id":%q}}}`, input, key))
			d := permission(t, s.recv())
			b, _ := d["behavior"].(string)
			m, _ := d["message"].(string)
			return b, m
		}},
	}
	for _, ad := range adapters {
		for _, rf := range refusals {
			t.Run(ad.name+"/"+rf.name, func(t *testing.T) {
				c, person := realDaemon(t)
				// The MCP adapter has no session: the key's first call must match.
				first := gate.Call{Agent: "claude", SessionID: "s1", Tool: "Bash", Cwd: "/p",
					Input: json.RawMessage(`{"command":"terraform apply"}`), IdempotencyKey: key}
				if ad.name == "mcp" {
					first.SessionID = ""
				}
				a, err := c.Submit(context.Background(), first, 0)
				if err != nil || a.Status != gate.StatusPending {
					t.Fatalf("first call: %+v, %v", a, err)
				}
				action, reason := ad.run(t, c, rf.input, rf.key)
				if action != "deny" || !strings.Contains(reason, rf.reason) || !strings.Contains(reason, "not run") {
					t.Errorf("answer %s %q, want deny saying %q and not run", action, reason, rf.reason)
				}
				list, err := person.List(context.Background(), "")
				if err != nil || len(list) != 1 || list[0].ID != a.ID || list[0].Status != gate.StatusPending {
					t.Errorf("the daemon holds %v (%v), want only the first call, pending", list, err)
				}
			})
		}
	}
}

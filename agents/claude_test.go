package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"approvalbot/gate"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeOutput parses a hook's stdout into a generic map.
func decodeOutput(t *testing.T, out []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	if bytes.Count(bytes.TrimSpace(out), []byte("\n")) != 0 {
		t.Fatalf("stdout has more than one line:\n%s", out)
	}
	return m
}

// path reads a nested field ("hookSpecificOutput.decision.behavior").
func path(m map[string]any, p string) any {
	var cur any = m
	for _, k := range strings.Split(p, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

func TestClaudeHookOutcomes(t *testing.T) {
	pre := readTestdata(t, "claude_2.1_pretooluse_bash.json")
	tests := []struct {
		name       string
		answer     gate.Approval
		decision   string
		reasonHas  string
		stop       bool
		reasonNot  string
		wantCancel bool
	}{
		{"allowed by rule", apAllowed, "allow", "allowed by rule", false, "", false},
		{"approved", apApproved, "allow", "approved by @ana via telegram", false, "", false},
		{"approved always", apApprovedAlways, "allow", "approved by @ana via slack", false, "", false},
		{"denied by person", apDeniedPerson, "deny", "denied by @ana via telegram: use the staging branch", false, "", false},
		{"denied by rule", apDeniedRule, "deny", "denied by rule: rm -rf * denied by rules.jsonc:7", false, "", false},
		{"denied stop", apDeniedStop, "deny", "wrong repo", true, "", false},
		{"expired", apExpired, "deny", "expired", false, "denied by", false},
		{"cancelled", apCancelled, "deny", "cancelled", false, "", false},
		{"inconsistent approved+deny", apInconsistent, "deny", "inconsistent", false, "", false},
		{"allowed without decision", apNoDecision, "deny", "inconsistent", false, "", false},
		{"unknown status", apUnknownStatus, "deny", "unexpected status", false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDecider{answer: answerWith(tt.answer)}
			var stdout, stderr bytes.Buffer
			code := RunClaudeHook(context.Background(), f, Options{Agent: "claude-code"}, bytes.NewReader(pre), &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit code %d, want 0 (stderr %s)", code, stderr.String())
			}
			m := decodeOutput(t, stdout.Bytes())
			if got := path(m, "hookSpecificOutput.hookEventName"); got != "PreToolUse" {
				t.Errorf("hookEventName = %v", got)
			}
			if got := path(m, "hookSpecificOutput.permissionDecision"); got != tt.decision {
				t.Errorf("permissionDecision = %v, want %s", got, tt.decision)
			}
			reason, _ := path(m, "hookSpecificOutput.permissionDecisionReason").(string)
			if !strings.Contains(reason, tt.reasonHas) {
				t.Errorf("reason %q does not contain %q", reason, tt.reasonHas)
			}
			if tt.reasonNot != "" && strings.Contains(reason, tt.reasonNot) {
				t.Errorf("reason %q contains %q", reason, tt.reasonNot)
			}
			if tt.stop {
				if m["continue"] != false || !strings.Contains(m["stopReason"].(string), "@ana") {
					t.Errorf("want continue:false with stopReason, got %v", m)
				}
			} else if _, ok := m["continue"]; ok {
				t.Errorf("unexpected continue in %v", m)
			}
			calls, cancels := f.recorded()
			if len(calls) != 1 {
				t.Fatalf("%d calls, want 1", len(calls))
			}
			if len(cancels) != 0 {
				t.Errorf("cancelled %v for a final answer", cancels)
			}
		})
	}
}

func TestClaudeHookCallFromPayloads(t *testing.T) {
	tests := []struct {
		file string
		want gate.Call
	}{
		{"claude_2.1_pretooluse_bash.json", gate.Call{Agent: "dev", SessionID: "9f0c5a52-3c1e-4a55-9d8e-2b1f4b0f7a11", Tool: "Bash", Cwd: "/home/dev/proj", IdempotencyKey: "toolu_01ABCDEFGHJKMNPQRSTVWXYZ",
			Input: json.RawMessage(`{"command":"git push origin main","description":"Push to origin"}`)}},
		{"claude_2.1.330_pretooluse_recorded.json", gate.Call{Agent: "dev", SessionID: "494cba24-17d2-478d-b861-9f334f80ea7a", Tool: "Bash", Cwd: "/tmp/rec/work", IdempotencyKey: "toolu_e2e_001",
			Input: json.RawMessage(`{"command":"touch /tmp/rec/x1","description":"e2e command"}`)}},
		{"claude_1.0_pretooluse_minimal.json", gate.Call{Agent: "dev", SessionID: "abc123", Tool: "Bash", Input: json.RawMessage(`{"command": "rm -rf build"}`)}},
		{"claude_1.0_pretooluse_cwd.json", gate.Call{Agent: "dev", SessionID: "abc123", Tool: "Write", Cwd: "/home/dev/proj",
			Input: json.RawMessage(`{"file_path":"/home/dev/proj/.env","content":"SECRET=1\n"}`)}},
		{"claude_2.1_pretooluse_subagent_mcp.json", gate.Call{Agent: "dev", SessionID: "s-7", Tool: "mcp__github__create_issue", Cwd: "/w", IdempotencyKey: "toolu_mcp_1",
			Input: json.RawMessage(`{"owner":"o","repo":"r","title":"t"}`)}},
		{"claude_2.1_permissionrequest.json", gate.Call{Agent: "dev", SessionID: "9f0c5a52", Tool: "Bash", Cwd: "/home/dev/proj", Input: json.RawMessage(`{"command":"npm publish"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := &fakeDecider{answer: answerWith(apApproved)}
			var stdout, stderr bytes.Buffer
			if code := RunClaudeHook(context.Background(), f, Options{Agent: "dev"}, bytes.NewReader(readTestdata(t, tt.file)), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			calls, _ := f.recorded()
			if len(calls) != 1 {
				t.Fatalf("%d calls", len(calls))
			}
			got := calls[0]
			if string(got.Input) != string(tt.want.Input) {
				t.Errorf("input %s, want %s", got.Input, tt.want.Input)
			}
			got.Input, tt.want.Input = nil, nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("call %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestClaudeHookPermissionRequest(t *testing.T) {
	pr := readTestdata(t, "claude_2.1_permissionrequest.json")
	tests := []struct {
		name      string
		answer    func(context.Context, gate.Call) (*gate.Approval, error)
		onError   gate.Action
		behavior  any // nil: no decision at all
		message   string
		interrupt bool
	}{
		{"approved", answerWith(apApproved), gate.Deny, "allow", "", false},
		{"denied", answerWith(apDeniedPerson), gate.Deny, "deny", "use the staging branch", false},
		{"denied stop", answerWith(apDeniedStop), gate.Deny, "deny", "wrong repo", true},
		{"expired", answerWith(apExpired), gate.Deny, "deny", "expired", false},
		{"unreachable deny", answerErr(errFakeUnreachable), gate.Deny, "deny", "unreachable", false},
		{"unreachable ask falls to Claude's prompt", answerErr(errFakeUnreachable), gate.Ask, nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDecider{answer: tt.answer}
			var stdout, stderr bytes.Buffer
			o := Options{Agent: "claude-code", OnError: tt.onError, IsUnreachable: isFakeUnreachable}
			if code := RunClaudeHook(context.Background(), f, o, bytes.NewReader(pr), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d", code)
			}
			m := decodeOutput(t, stdout.Bytes())
			if got := path(m, "hookSpecificOutput.decision.behavior"); got != tt.behavior {
				t.Fatalf("behavior = %v, want %v (%s)", got, tt.behavior, stdout.String())
			}
			if tt.behavior == nil {
				if len(m) != 0 {
					t.Errorf("want {} (no decision), got %s", stdout.String())
				}
				return
			}
			if got := path(m, "hookSpecificOutput.hookEventName"); got != "PermissionRequest" {
				t.Errorf("hookEventName = %v", got)
			}
			msg, _ := path(m, "hookSpecificOutput.decision.message").(string)
			if !strings.Contains(msg, tt.message) {
				t.Errorf("message %q lacks %q", msg, tt.message)
			}
			if got, _ := path(m, "hookSpecificOutput.decision.interrupt").(bool); got != tt.interrupt {
				t.Errorf("interrupt = %v", got)
			}
			if got := path(m, "hookSpecificOutput.permissionDecision"); got != nil {
				t.Errorf("PermissionRequest answer carries permissionDecision %v", got)
			}
		})
	}
}

func TestClaudeHookFailClosed(t *testing.T) {
	pre := readTestdata(t, "claude_2.1_pretooluse_bash.json")
	allowAll := answerWith(apApproved)
	tests := []struct {
		name      string
		stdin     string
		answer    func(context.Context, gate.Call) (*gate.Approval, error)
		opts      Options
		decision  string
		reasonHas string
		calls     int
	}{
		{"not JSON", "hello, world", allowAll, Options{}, "deny", "not a JSON object", 0},
		{"truncated JSON", string(pre[:len(pre)/2]), allowAll, Options{}, "deny", "not valid JSON", 0},
		{"empty stdin", "", allowAll, Options{}, "deny", "empty", 0},
		{"JSON array", `[{"tool_name":"Bash"}]`, allowAll, Options{}, "deny", "not a JSON object", 0},
		{"no tool_name", `{"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}`, allowAll, Options{}, "deny", "no tool_name", 0},
		{"tool_name wrong type", `{"tool_name":7,"tool_input":{}}`, allowAll, Options{}, "deny", "not valid JSON", 0},
		{"tool_input a string", `{"tool_name":"Bash","tool_input":"rm -rf /"}`, allowAll, Options{}, "deny", "tool_input is not a JSON object", 0},
		{"unreachable", string(pre), answerErr(errFakeUnreachable), Options{IsUnreachable: isFakeUnreachable}, "deny", "daemon unreachable", 1},
		{"unreachable, on-error ask", string(pre), answerErr(errFakeUnreachable), Options{IsUnreachable: isFakeUnreachable, OnError: gate.Ask}, "ask", "daemon unreachable", 1},
		{"other API error never asks", string(pre), answerErr(errors.New("401 unauthorized")), Options{IsUnreachable: isFakeUnreachable, OnError: gate.Ask}, "deny", "401 unauthorized", 1},
		{"nil approval without error", string(pre), func(context.Context, gate.Call) (*gate.Approval, error) { return nil, nil }, Options{}, "deny", "no final answer", 1},
		{"pending without error", string(pre), answerWith(gate.Approval{Status: gate.StatusPending}), Options{}, "deny", "no final answer", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDecider{answer: tt.answer}
			var stdout, stderr bytes.Buffer
			if code := RunClaudeHook(context.Background(), f, tt.opts, strings.NewReader(tt.stdin), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d, want 0", code)
			}
			m := decodeOutput(t, stdout.Bytes())
			if got := path(m, "hookSpecificOutput.permissionDecision"); got != tt.decision {
				t.Errorf("permissionDecision = %v, want %s", got, tt.decision)
			}
			if reason, _ := path(m, "hookSpecificOutput.permissionDecisionReason").(string); !strings.Contains(reason, tt.reasonHas) {
				t.Errorf("reason %q lacks %q", reason, tt.reasonHas)
			}
			if calls, _ := f.recorded(); len(calls) != tt.calls {
				t.Errorf("%d calls, want %d", len(calls), tt.calls)
			}
		})
	}
}

func TestClaudeHookUnsupportedEvent(t *testing.T) {
	f := &fakeDecider{answer: answerWith(apApproved)}
	var stdout, stderr bytes.Buffer
	code := RunClaudeHook(context.Background(), f, Options{}, bytes.NewReader(readTestdata(t, "claude_2.1_posttooluse.json")), &stdout, &stderr)
	if code != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "PostToolUse") {
		t.Fatalf("exit %d stdout %q stderr %q; want exit 2, nothing on stdout, the event named on stderr", code, stdout.String(), stderr.String())
	}
}

// The hook's own deadline: deny "no decision in time" and withdraw the approval.
func TestClaudeHookDeadline(t *testing.T) {
	f := &fakeDecider{answer: answerPendingUntilDone}
	var stdout, stderr bytes.Buffer
	o := Options{Timeout: 1} // 1ns: the deadline passes at once
	if code := RunClaudeHook(context.Background(), f, o, bytes.NewReader(readTestdata(t, "claude_2.1_pretooluse_bash.json")), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	m := decodeOutput(t, stdout.Bytes())
	if path(m, "hookSpecificOutput.permissionDecision") != "deny" || !strings.Contains(path(m, "hookSpecificOutput.permissionDecisionReason").(string), "no decision in time") {
		t.Fatalf("got %s", stdout.String())
	}
	if _, cancels := f.recorded(); len(cancels) != 1 || cancels[0] != "ap-pending" {
		t.Fatalf("cancels %v, want [ap-pending]", cancels)
	}
}

// Claude cancelled the hook (SIGTERM/SIGINT end the context): the approval is
// withdrawn through the API and the answer is deny.
func TestClaudeHookCancelledBySignal(t *testing.T) {
	f := &fakeDecider{answer: answerPendingUntilDone, waiting: make(chan gate.Call, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var stdout, stderr bytes.Buffer
	go func() {
		done <- RunClaudeHook(ctx, f, Options{}, bytes.NewReader(readTestdata(t, "claude_2.1_pretooluse_bash.json")), &stdout, &stderr)
	}()
	<-f.waiting
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, cancels := f.recorded(); len(cancels) != 1 {
		t.Fatalf("cancels %v, want one", cancels)
	}
	m := decodeOutput(t, stdout.Bytes())
	if path(m, "hookSpecificOutput.permissionDecision") != "deny" {
		t.Fatalf("got %s", stdout.String())
	}
}

func TestClipReason(t *testing.T) {
	long := strings.Repeat("é", maxReasonRunes+10)
	got := clip(long)
	if n := len([]rune(got)); n != maxReasonRunes+1 || !strings.HasSuffix(got, "…") {
		t.Fatalf("clip: %d runes", n)
	}
	if clip("short") != "short" {
		t.Fatal("clip changed a short string")
	}
}

// TestClaudeHookDefer: with Options.Defer, a PreToolUse call a person must
// decide is answered "defer" at once, marked deferred, and not withdrawn;
// a final answer (a rule, or the decision found again on --resume) is
// answered as usual; a PermissionRequest never defers; errors deny.
func TestClaudeHookDefer(t *testing.T) {
	pre := readTestdata(t, "claude_2.1_pretooluse_bash.json")
	perm := readTestdata(t, "claude_2.1_permissionrequest.json")
	pending := gate.Approval{ID: "ap1", Status: gate.StatusPending}
	tests := []struct {
		name     string
		payload  []byte
		answer   func(context.Context, gate.Call) (*gate.Approval, error)
		path     string
		decision string
	}{
		{"pending defers", pre, answerWith(pending), "hookSpecificOutput.permissionDecision", "defer"},
		{"approved on resume", pre, answerWith(apApproved), "hookSpecificOutput.permissionDecision", "allow"},
		{"denied on resume", pre, answerWith(apDeniedPerson), "hookSpecificOutput.permissionDecision", "deny"},
		{"expired on resume", pre, answerWith(apExpired), "hookSpecificOutput.permissionDecision", "deny"},
		{"unreachable", pre, func(context.Context, gate.Call) (*gate.Approval, error) { return nil, errFakeUnreachable }, "hookSpecificOutput.permissionDecision", "deny"},
		{"reused key", pre, func(context.Context, gate.Call) (*gate.Approval, error) { return nil, gate.ErrConflict }, "hookSpecificOutput.permissionDecision", "deny"},
		{"no approval", pre, func(context.Context, gate.Call) (*gate.Approval, error) { return nil, nil }, "hookSpecificOutput.permissionDecision", "deny"},
		{"permission request waits", perm, answerWith(apApproved), "hookSpecificOutput.decision.behavior", "allow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDecider{answer: tt.answer}
			var stdout, stderr bytes.Buffer
			o := Options{Agent: "claude-code", Defer: true, IsUnreachable: func(err error) bool { return errors.Is(err, errFakeUnreachable) }}
			if code := RunClaudeHook(context.Background(), f, o, bytes.NewReader(tt.payload), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d, stderr %s", code, stderr.String())
			}
			m := decodeOutput(t, stdout.Bytes())
			if got := path(m, tt.path); got != tt.decision {
				t.Fatalf("%s = %v, want %s; output %s", tt.path, got, tt.decision, stdout.String())
			}
			calls, cancels := f.recorded()
			if len(cancels) != 0 {
				t.Errorf("withdrew %v: a deferred call's approval must stay pending", cancels)
			}
			deferred := bytes.Equal(tt.payload, pre) // PreToolUse only
			if len(calls) != 1 || calls[0].Deferred != deferred {
				t.Errorf("calls %+v: want one, deferred=%v", calls, deferred)
			}
			if tt.decision == "defer" && !strings.Contains(stdout.String(), "ap1") {
				t.Errorf("the reason does not name the approval: %s", stdout.String())
			}
		})
	}
}

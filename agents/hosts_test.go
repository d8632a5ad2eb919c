package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"approvalbot/gate"
)

// TestHostHookCalls: each recorded payload becomes the call the gate judges.
func TestHostHookCalls(t *testing.T) {
	tests := []struct {
		host                   Host
		file                   string
		session, tool, cwd     string
		key                    string
		input                  string // the input as submitted, compacted
		wantEventInAnswerShape string // "" or the Claude event for Copilot's PascalCase
	}{
		{HostGemini, "gemini_0.61.0_beforetool_shell.json", "9f1c2a7e-5b3d-4e8a-9c21-0d6f4b1e7a33", "run_shell_command", "/home/dev/proj", "",
			`{"command":"echo x > .env","description":"Write x to .env"}`, ""},
		{HostGemini, "gemini_0.61.0_beforetool_dir_path.json", "9f1c2a7e-5b3d-4e8a-9c21-0d6f4b1e7a33", "run_shell_command", "/home/dev/proj", "",
			`{"command":"make test","description":"Run the tests","dir_path":"sub/pkg","is_background":false}`, ""},
		{HostGemini, "gemini_0.61.0_beforetool_write_file.json", "9f1c2a7e-5b3d-4e8a-9c21-0d6f4b1e7a33", "write_file", "/home/dev/proj", "",
			`{"file_path":"/home/dev/proj/notes.md","content":"# notes\n"}`, ""},
		{HostCopilot, "copilot_1.0.102_pretooluse_bash.json", "0b6d7c1e-2f4a-4d9b-8e3c-5a1f2b3c4d5e", "bash", "/home/dev/proj", "",
			`{"command":"echo cp > cp-cap.txt","description":"Write a marker file"}`, ""},
		{HostCopilot, "copilot_docs_pretooluse_toolargs_string.json", "", "bash", "/home/dev/proj", "",
			`{"command":"rm -rf dist","description":"Clean build directory"}`, ""},
		{HostCopilot, "copilot_1.0.102_pretooluse_claude_format.json", "0b6d7c1e-2f4a-4d9b-8e3c-5a1f2b3c4d5e", "Bash", "/home/dev/proj", "",
			`{"command":"echo cp > cp-cap.txt","description":"Write a marker file"}`, "PreToolUse"},
		{HostCopilot, "copilot_permissionrequest.json", "0b6d7c1e-2f4a-4d9b-8e3c-5a1f2b3c4d5e", "edit", "/home/dev/proj", "",
			`{"path":"/home/dev/proj/main.go","old_str":"a","new_str":"b"}`, ""},
		{HostCursor, "cursor_pretooluse_shell.json", "c0a8b1d2-3e4f-5a6b-7c8d-9e0f1a2b3c4d", "Shell", "/home/dev/proj", "toolu_01Cursor",
			`{"command":"npm install express","cwd":"/home/dev/proj","timeout":30000}`, ""},
		{HostCursor, "cursor_pretooluse_write.json", "c0a8b1d2-3e4f-5a6b-7c8d-9e0f1a2b3c4d", "Write", "/home/dev/proj", "toolu_02Cursor",
			`{"file_path":"/home/dev/proj/.env","content":"TOKEN=x"}`, ""},
		{HostCursor, "cursor_beforeshellexecution.json", "c0a8b1d2-3e4f-5a6b-7c8d-9e0f1a2b3c4d", "Shell", "/home/dev/proj", "",
			`{"command":"git push --force"}`, ""},
		{HostCursor, "cursor_beforereadfile.json", "c0a8b1d2", "Read", "/home/dev/proj", "",
			`{"file_path":"/home/dev/proj/secrets.env"}`, ""},
		{HostCursor, "cursor_beforemcpexecution.json", "c0a8b1d2", "database_query", "/home/dev/proj", "",
			`{"query":"SELECT * FROM users"}`, ""},
		{HostOpencode, "opencode_1.18.33_bash.json", "ses_5a1b2c3d4e5fXYZ", "bash", "/home/dev/proj", "call_k8J2mQ",
			`{"command":"echo allowed > allowed.txt","description":"Write a marker"}`, ""},
		{HostOpencode, "opencode_1.18.33_write.json", "ses_5a1b2c3d4e5fXYZ", "write", "/home/dev/proj", "call_k8J2mR",
			`{"filePath":"/home/dev/proj/.env","content":"x"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := &fakeDecider{answer: answerWith(apAllowed)}
			var stdout bytes.Buffer
			code := RunHostHook(context.Background(), f, Options{Agent: "a1"}, tt.host, bytes.NewReader(readTestdata(t, tt.file)), &stdout)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			calls, _ := f.recorded()
			if len(calls) != 1 {
				t.Fatalf("%d calls, want 1 (stdout %s)", len(calls), stdout.String())
			}
			c := calls[0]
			var got bytes.Buffer
			if err := json.Compact(&got, c.Input); err != nil {
				t.Fatal(err)
			}
			if c.Agent != "a1" || c.SessionID != tt.session || c.Tool != tt.tool || c.Cwd != tt.cwd || c.IdempotencyKey != tt.key || got.String() != tt.input {
				t.Errorf("call %+v input %s\nwant session %q tool %q cwd %q key %q input %s", c, got.String(), tt.session, tt.tool, tt.cwd, tt.key, tt.input)
			}
			m := decodeOutput(t, stdout.Bytes())
			if tt.wantEventInAnswerShape != "" {
				if path(m, "hookSpecificOutput.permissionDecision") != "allow" || path(m, "hookSpecificOutput.hookEventName") != tt.wantEventInAnswerShape {
					t.Errorf("answer %s, want a Claude-format allow", stdout.String())
				}
			}
		})
	}
}

// TestHostHookAnswers: every outcome in each host's own answer format, never
// ask, never empty.
func TestHostHookAnswers(t *testing.T) {
	type check func(t *testing.T, m map[string]any)
	field := func(p, want string) check {
		return func(t *testing.T, m map[string]any) {
			t.Helper()
			if got, _ := path(m, p).(string); got != want {
				t.Errorf("%s = %q, want %q", p, got, want)
			}
		}
	}
	has := func(p, sub string) check {
		return func(t *testing.T, m map[string]any) {
			t.Helper()
			if got, _ := path(m, p).(string); !strings.Contains(got, sub) {
				t.Errorf("%s = %q, want it to contain %q", p, got, sub)
			}
		}
	}
	absent := func(p string) check {
		return func(t *testing.T, m map[string]any) {
			t.Helper()
			if v := path(m, p); v != nil {
				t.Errorf("%s = %v, want absent", p, v)
			}
		}
	}
	isFalse := func(p string) check {
		return func(t *testing.T, m map[string]any) {
			t.Helper()
			if v, ok := path(m, p).(bool); !ok || v {
				t.Errorf("%s = %v, want false", p, path(m, p))
			}
		}
	}
	isTrue := func(p string) check {
		return func(t *testing.T, m map[string]any) {
			t.Helper()
			if v, ok := path(m, p).(bool); !ok || !v {
				t.Errorf("%s = %v, want true", p, path(m, p))
			}
		}
	}
	conflict := func(context.Context, gate.Call) (*gate.Approval, error) {
		return nil, &wrapped{"api: 409 Conflict: key k1 was first used for another call", gate.ErrConflict}
	}
	invalid := func(context.Context, gate.Call) (*gate.Approval, error) {
		return nil, &wrapped{"api: 400: input has the key \"command\" twice", gate.ErrInvalid}
	}
	gem, cop, copClaude, cur, curShell, oc := "gemini_0.61.0_beforetool_shell.json", "copilot_1.0.102_pretooluse_bash.json",
		"copilot_1.0.102_pretooluse_claude_format.json", "cursor_pretooluse_shell.json", "cursor_beforeshellexecution.json", "opencode_1.18.33_bash.json"
	tests := []struct {
		name   string
		host   Host
		file   string
		answer func(context.Context, gate.Call) (*gate.Approval, error)
		checks []check
	}{
		{"gemini allowed", HostGemini, gem, answerWith(apAllowed), []check{field("decision", "allow"), absent("reason"), absent("continue")}},
		{"gemini approved", HostGemini, gem, answerWith(apApproved), []check{field("decision", "allow")}},
		{"gemini denied", HostGemini, gem, answerWith(apDeniedPerson), []check{field("decision", "deny"), has("reason", "use the staging branch")}},
		{"gemini denied stop ends the loop", HostGemini, gem, answerWith(apDeniedStop), []check{field("decision", "deny"), isFalse("continue"), has("stopReason", "stopped the turn")}},
		{"gemini expired", HostGemini, gem, answerWith(apExpired), []check{field("decision", "deny"), has("reason", "expired")}},
		{"gemini unreachable denies, never asks", HostGemini, gem, answerErr(errFakeUnreachable), []check{field("decision", "deny"), has("reason", "denied to be safe")}},
		{"gemini 409 denies", HostGemini, gem, conflict, []check{field("decision", "deny"), has("reason", "reuses the id")}},
		{"gemini 400 denies", HostGemini, gem, invalid, []check{field("decision", "deny"), has("reason", "cannot judge this call's input")}},
		{"gemini other event denies", HostGemini, "gemini_aftertool.json", answerWith(apApproved), []check{field("decision", "deny"), has("reason", "BeforeTool")}},

		{"copilot allowed", HostCopilot, cop, answerWith(apAllowed), []check{field("permissionDecision", "allow"), field("behavior", "allow"), absent("message")}},
		{"copilot denied", HostCopilot, cop, answerWith(apDeniedRule), []check{field("permissionDecision", "deny"), has("permissionDecisionReason", "denied by rule"), field("behavior", "deny"), has("message", "denied by rule")}},
		{"copilot denied stop interrupts", HostCopilot, "copilot_permissionrequest.json", answerWith(apDeniedStop), []check{field("behavior", "deny"), isTrue("interrupt")}},
		{"copilot unreachable", HostCopilot, cop, answerErr(errFakeUnreachable), []check{field("permissionDecision", "deny"), field("behavior", "deny")}},
		{"copilot 409", HostCopilot, cop, conflict, []check{field("permissionDecision", "deny")}},
		{"copilot claude format denied", HostCopilot, copClaude, answerWith(apDeniedPerson), []check{field("hookSpecificOutput.permissionDecision", "deny"), has("hookSpecificOutput.permissionDecisionReason", "staging")}},
		{"copilot claude format unreachable never asks", HostCopilot, copClaude, answerErr(errFakeUnreachable), []check{field("hookSpecificOutput.permissionDecision", "deny")}},

		{"cursor allowed", HostCursor, cur, answerWith(apApproved), []check{field("permission", "allow"), absent("agent_message")}},
		{"cursor denied", HostCursor, cur, answerWith(apDeniedPerson), []check{field("permission", "deny"), has("agent_message", "staging"), has("user_message", "staging")}},
		{"cursor denied stop says stop", HostCursor, cur, answerWith(apDeniedStop), []check{field("permission", "deny"), has("agent_message", "do not retry")}},
		{"cursor shell denied", HostCursor, curShell, answerWith(apDeniedRule), []check{field("permission", "deny")}},
		{"cursor unreachable", HostCursor, curShell, answerErr(errFakeUnreachable), []check{field("permission", "deny")}},
		{"cursor 400", HostCursor, cur, invalid, []check{field("permission", "deny")}},
		{"cursor other event denies", HostCursor, "cursor_stop.json", answerWith(apApproved), []check{field("permission", "deny"), has("agent_message", "not supported")}},

		{"opencode allowed", HostOpencode, oc, answerWith(apAllowed), []check{field("decision", "allow")}},
		{"opencode denied", HostOpencode, oc, answerWith(apDeniedPerson), []check{field("decision", "deny"), has("reason", "staging")}},
		{"opencode stop", HostOpencode, oc, answerWith(apDeniedStop), []check{field("decision", "deny"), isTrue("stop")}},
		{"opencode inconsistent", HostOpencode, oc, answerWith(apInconsistent), []check{field("decision", "deny")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDecider{answer: tt.answer}
			var stdout bytes.Buffer
			o := Options{IsUnreachable: isFakeUnreachable, OnError: gate.Ask}
			if code := RunHostHook(context.Background(), f, o, tt.host, bytes.NewReader(readTestdata(t, tt.file)), &stdout); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if strings.Contains(stdout.String(), `"ask"`) {
				t.Fatalf("answer asks: %s", stdout.String())
			}
			m := decodeOutput(t, stdout.Bytes())
			for _, c := range tt.checks {
				c(t, m)
			}
		})
	}
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// TestHostHookBadInputDenies: unreadable input is a deny in the host's format.
func TestHostHookBadInputDenies(t *testing.T) {
	bad := []string{"", "not json", "[]", `{"tool_name":""}`, `{"toolName":"bash","toolArgs":[1]}`, `{"toolName":"bash","toolArgs":"rm -rf /"}`,
		`{"hook_event_name":"preToolUse","tool_name":"Shell","tool_input":7}`, `{"tool":"bash","args":"x"}`, `{"hook_event_name":"beforeShellExecution"}`}
	for _, h := range Hosts() {
		for _, in := range bad {
			f := &fakeDecider{answer: answerWith(apApproved)}
			var stdout bytes.Buffer
			if code := RunHostHook(context.Background(), f, Options{}, h, strings.NewReader(in), &stdout); code != 0 {
				t.Errorf("%s %q: exit %d", h, in, code)
			}
			if calls, _ := f.recorded(); len(calls) != 0 {
				t.Errorf("%s %q: submitted %+v", h, in, calls)
			}
			if !hostAnswerDenies(h, stdout.Bytes()) || !strings.Contains(stdout.String(), "denied to be safe") {
				t.Errorf("%s %q: answer %s", h, in, stdout.String())
			}
		}
	}
}

// TestHostHookDeadline: the hook's own deadline comes before the host's and
// answers deny after withdrawing the approval.
func TestHostHookDeadline(t *testing.T) {
	for _, h := range Hosts() {
		file := map[Host]string{HostGemini: "gemini_0.61.0_beforetool_shell.json", HostCopilot: "copilot_1.0.102_pretooluse_bash.json",
			HostCursor: "cursor_pretooluse_shell.json", HostOpencode: "opencode_1.18.33_bash.json"}[h]
		f := &fakeDecider{answer: answerPendingUntilDone}
		var stdout bytes.Buffer
		RunHostHook(context.Background(), f, Options{Timeout: 50e6}, h, bytes.NewReader(readTestdata(t, file)), &stdout)
		if !hostAnswerDenies(h, stdout.Bytes()) || !strings.Contains(stdout.String(), "no decision in time") {
			t.Errorf("%s: answer %s", h, stdout.String())
		}
		if _, cancels := f.recorded(); len(cancels) != 1 {
			t.Errorf("%s: cancels %v, want the pending approval withdrawn", h, cancels)
		}
	}
}

// TestHostHookCancelledWithdraws: a cancelled hook (signal, parent gone)
// withdraws its approval and denies.
func TestHostHookCancelledWithdraws(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeDecider{answer: answerPendingUntilDone, waiting: make(chan gate.Call, 1)}
	done := make(chan []byte)
	go func() {
		var stdout bytes.Buffer
		RunHostHook(ctx, f, Options{}, HostGemini, bytes.NewReader(readTestdata(t, "gemini_0.61.0_beforetool_shell.json")), &stdout)
		done <- stdout.Bytes()
	}()
	<-f.waiting
	cancel()
	out := <-done
	if !hostAnswerDenies(HostGemini, out) || !strings.Contains(string(out), "withdrawn") {
		t.Errorf("answer %s", out)
	}
	if _, cancels := f.recorded(); len(cancels) != 1 {
		t.Errorf("cancels %v", cancels)
	}
}

// TestCodexApplyPatchJudgedAsPatch: Codex's {"command": "*** Begin Patch"}
// reaches the gate as a patch, so its paths are judged as writes; anything
// else named command, or a repeated key, is passed as it came.
func TestCodexApplyPatchJudgedAsPatch(t *testing.T) {
	f := &fakeDecider{answer: answerWith(apAllowed)}
	var stdout, stderr bytes.Buffer
	RunCodexHook(context.Background(), f, Options{}, bytes.NewReader(readTestdata(t, "codex_pretooluse_apply_patch.json")), &stdout, &stderr)
	calls, _ := f.recorded()
	if len(calls) != 1 || string(calls[0].Input) != `{"input":"*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"}` {
		t.Fatalf("calls %+v", calls)
	}
	for _, in := range []string{
		`{"command":"ls"}`,
		`{"command":"*** Begin Patch\n*** End Patch","command":"rm -rf /"}`,
		`{"command":"*** Begin Patch\n","workdir":"/"}`,
		`{"command":["*** Begin Patch"]}`,
	} {
		if got := normalizePatchInput("apply_patch", json.RawMessage(in)); string(got) != in {
			t.Errorf("%s rewritten to %s", in, got)
		}
	}
	if got := normalizePatchInput("Bash", json.RawMessage(`{"command":"*** Begin Patch\n"}`)); string(got) != `{"command":"*** Begin Patch\n"}` {
		t.Errorf("Bash input rewritten: %s", got)
	}
}

// hostAnswerDenies reports whether out is one JSON answer that denies in
// host h's format.
func hostAnswerDenies(h Host, out []byte) bool {
	var m map[string]any
	if json.Unmarshal(out, &m) != nil {
		return false
	}
	switch h {
	case HostGemini, HostOpencode:
		return m["decision"] == "deny"
	case HostCopilot:
		if hs, ok := m["hookSpecificOutput"].(map[string]any); ok {
			return hs["permissionDecision"] == "deny" || path(m, "hookSpecificOutput.decision.behavior") == "deny"
		}
		return m["permissionDecision"] == "deny" && m["behavior"] == "deny"
	case HostCursor:
		return m["permission"] == "deny"
	}
	return false
}

// hostAnswerAllows reports whether out allows in host h's format.
func hostAnswerAllows(h Host, out []byte) bool {
	var m map[string]any
	if json.Unmarshal(out, &m) != nil {
		return false
	}
	switch h {
	case HostGemini, HostOpencode:
		return m["decision"] == "allow"
	case HostCopilot:
		return m["permissionDecision"] == "allow" || path(m, "hookSpecificOutput.permissionDecision") == "allow" ||
			path(m, "hookSpecificOutput.decision.behavior") == "allow"
	case HostCursor:
		return m["permission"] == "allow"
	}
	return false
}

// FuzzHostHooks: for every host, whatever arrives on stdin, the hook does
// not panic, exits 0 with exactly one JSON answer that allows or denies
// (never ask, never empty), and allows only input its reader accepted.
func FuzzHostHooks(f *testing.F) {
	seedHookPayloads(f)
	f.Add([]byte(`{"toolName":"bash","toolArgs":"{\"command\":\"ls\"}"}`))
	f.Add([]byte(`{"hook_event_name":"beforeShellExecution","command":"ls","cwd":"/"}`))
	f.Add([]byte(`{"tool":"bash","args":{"command":"ls"},"callID":"c"}`))
	f.Add([]byte(`{"hook_event_name":"BeforeTool","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, h := range Hosts() {
			_, readErr := readPayload(h, bytes.NewReader(data))
			d := &fakeDecider{answer: answerWith(apApproved)}
			var stdout bytes.Buffer
			if code := RunHostHook(context.Background(), d, Options{}, h, bytes.NewReader(data), &stdout); code != 0 {
				t.Fatalf("%s: exit %d", h, code)
			}
			out := stdout.Bytes()
			if bytes.Count(bytes.TrimSpace(out), []byte("\n")) != 0 {
				t.Fatalf("%s: more than one line: %q", h, out)
			}
			allows, denies := hostAnswerAllows(h, out), hostAnswerDenies(h, out)
			if allows == denies {
				t.Fatalf("%s: answer neither allows nor denies (or both): %s", h, out)
			}
			if readErr != nil && allows {
				t.Fatalf("%s: allow for input its reader refused (%v): %q", h, readErr, data)
			}
		}
	})
}

package agents

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"approvalbot/gate"
)

func TestCodexHook(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		answer    func(context.Context, gate.Call) (*gate.Approval, error)
		opts      Options
		wantCode  int
		behavior  string // PermissionRequest decision.behavior, or "" for PreToolUse
		wantEmpty bool   // stdout is {} (no objection)
		stderrHas string
		wantKey   string
	}{
		{"pre allowed", "codex_pretooluse_bash.json", answerWith(apAllowed), Options{}, 0, "", true, "", "call_Xy12"},
		{"pre approved", "codex_pretooluse_apply_patch.json", answerWith(apApproved), Options{}, 0, "", true, "", "call_patch"},
		{"pre denied", "codex_pretooluse_bash.json", answerWith(apDeniedPerson), Options{}, 2, "", false, "use the staging branch", "call_Xy12"},
		{"pre denied stop has no continue:false", "codex_pretooluse_bash.json", answerWith(apDeniedStop), Options{}, 2, "", false, "do not retry", "call_Xy12"},
		{"pre expired", "codex_pretooluse_bash.json", answerWith(apExpired), Options{}, 2, "", false, "expired", "call_Xy12"},
		{"pre unreachable never asks", "codex_pretooluse_bash.json", answerErr(errFakeUnreachable), Options{IsUnreachable: isFakeUnreachable, OnError: gate.Ask}, 2, "", false, "unreachable", "call_Xy12"},
		{"permission request allowed", "codex_permissionrequest.json", answerWith(apApproved), Options{}, 0, "allow", false, "", ""},
		{"permission request denied", "codex_permissionrequest.json", answerWith(apDeniedRule), Options{}, 2, "deny", false, "denied by rule", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDecider{answer: tt.answer}
			var stdout, stderr bytes.Buffer
			code := RunCodexHook(context.Background(), f, tt.opts, bytes.NewReader(readTestdata(t, tt.file)), &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			m := decodeOutput(t, stdout.Bytes())
			if tt.wantEmpty && len(m) != 0 {
				t.Errorf("stdout %s, want {}", stdout.String())
			}
			if _, ok := m["continue"]; ok {
				t.Errorf("Codex answer carries continue (unsupported, would fail open): %s", stdout.String())
			}
			if got := path(m, "hookSpecificOutput.permissionDecision"); got == "ask" || got == "allow" {
				t.Errorf("Codex PreToolUse answer %v is unsupported by Codex", got)
			}
			if tt.behavior != "" {
				if got := path(m, "hookSpecificOutput.decision.behavior"); got != tt.behavior {
					t.Errorf("behavior %v, want %s", got, tt.behavior)
				}
			}
			if tt.wantCode == 2 {
				if !strings.Contains(stderr.String(), tt.stderrHas) {
					t.Errorf("stderr %q lacks %q", stderr.String(), tt.stderrHas)
				}
			} else if stderr.Len() != 0 {
				t.Errorf("stderr on allow: %q", stderr.String())
			}
			calls, _ := f.recorded()
			if len(calls) != 1 || calls[0].IdempotencyKey != tt.wantKey || calls[0].Agent != tt.opts.Agent {
				t.Errorf("calls %+v, want one with key %q", calls, tt.wantKey)
			}
		})
	}
}

func TestCodexHookBadInputDenies(t *testing.T) {
	for _, in := range []string{"", "not json", `{"tool_name":""}`, `{"tool_name":"Bash","tool_input":[1]}`} {
		f := &fakeDecider{answer: answerWith(apApproved)}
		var stdout, stderr bytes.Buffer
		if code := RunCodexHook(context.Background(), f, Options{}, strings.NewReader(in), &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2", in, code)
		}
		if !strings.Contains(stderr.String(), "denied to be safe") {
			t.Errorf("%q: stderr %q", in, stderr.String())
		}
		if calls, _ := f.recorded(); len(calls) != 0 {
			t.Errorf("%q: submitted %v", in, calls)
		}
	}
}

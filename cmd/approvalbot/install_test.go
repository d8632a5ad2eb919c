package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runInstallIn runs `approvalbot install args...` with HOME=home.
func runInstallIn(t *testing.T, home string, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return vars[k]
	}}
	code = dispatch(context.Background(), e, append([]string{"install"}, args...))
	return code, out.String(), errb.String()
}

func readJSONFile(t *testing.T, p string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v\n%s", p, err, b)
	}
	return m
}

// at walks a decoded JSON value by object keys and list indexes ("0").
func at(v any, keys ...string) any {
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i := int(k[0] - '0')
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err = filepath.EvalSymlinks(exe)
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestInstallEachAgent: each agent's file, in the agent's format, with the
// absolute binary path, the host timeout above the hook's, the fail-closed
// switch, and what is left to the person.
func TestInstallEachAgent(t *testing.T) {
	exe := testExe(t)
	tests := []struct {
		agent   string
		file    string
		command []string // keys to the command
		timeout []string
		want    float64
		extra   map[string]any // other key paths (joined by '/') and values
		todo    string
	}{
		{"claude", ".claude/settings.json", []string{"hooks", "PreToolUse", "0", "hooks", "0", "command"}, []string{"hooks", "PreToolUse", "0", "hooks", "0", "timeout"}, 900,
			map[string]any{"hooks/PreToolUse/0/hooks/0/onFailure": "block", "hooks/PreToolUse/0/matcher": "*"}, "APPROVALBOT_TOKEN"},
		{"codex", ".codex/hooks.json", []string{"hooks", "PreToolUse", "0", "hooks", "0", "command"}, []string{"hooks", "PreToolUse", "0", "hooks", "0", "timeout"}, 900,
			map[string]any{"hooks/PreToolUse/0/matcher": ".*"}, "--dangerously-bypass-hook-trust"},
		{"gemini", ".gemini/settings.json", []string{"hooks", "BeforeTool", "0", "hooks", "0", "command"}, []string{"hooks", "BeforeTool", "0", "hooks", "0", "timeout"}, 900000,
			map[string]any{"hooks/BeforeTool/0/matcher": ".*"}, "trust"},
		{"copilot", ".copilot/settings.json", []string{"hooks", "preToolUse", "0", "bash"}, []string{"hooks", "preToolUse", "0", "timeoutSec"}, 900,
			map[string]any{"hooks/preToolUse/0/type": "command"}, "times out"},
		{"cursor", ".cursor/hooks.json", []string{"hooks", "preToolUse", "0", "command"}, []string{"hooks", "preToolUse", "0", "timeout"}, 900,
			map[string]any{"hooks/preToolUse/0/failClosed": true, "version": float64(1)}, "beforeShellExecution"},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			home := t.TempDir()
			code, out, errOut := runInstallIn(t, home, nil, tt.agent)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			p := filepath.Join(home, tt.file)
			if !strings.Contains(out, "created "+p) || !strings.Contains(out, "Left to you:") || !strings.Contains(out, tt.todo) {
				t.Errorf("output:\n%s", out)
			}
			m := readJSONFile(t, p)
			if got := at(m, tt.command...); got != exe+" hook "+tt.agent {
				t.Errorf("command %v, want %q", got, exe+" hook "+tt.agent)
			}
			if got := at(m, tt.timeout...); got != tt.want {
				t.Errorf("timeout %v, want %v", got, tt.want)
			}
			for k, v := range tt.extra {
				if got := at(m, strings.Split(k, "/")...); got != v {
					t.Errorf("%s = %v, want %v", k, got, v)
				}
			}
			if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", st.Mode().Perm())
			}
		})
	}
}

// TestInstallMergesIdempotentBackup: existing settings are kept, an old
// approvalbot entry is replaced in place (not doubled), a changed file is
// backed up, and a second run changes nothing.
func TestInstallMergesIdempotentBackup(t *testing.T) {
	exe := testExe(t)
	home := t.TempDir()
	p := filepath.Join(home, ".claude", "settings.json")
	old := `{
  "model": "opus",
  "env": {"FOO": "1"},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]},
      {"matcher": "*", "hooks": [{"type": "command", "command": "approvalbot hook claude", "timeout": 60}]}
    ],
    "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "log-it"}]}]
  }
}`
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(old), 0o640); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runInstallIn(t, home, map[string]string{"APPROVALBOT_URL": "http://127.0.0.1:9999"}, "claude")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m := readJSONFile(t, p)
	if at(m, "model") != "opus" || at(m, "env", "FOO") != "1" || at(m, "hooks", "PostToolUse", "0", "hooks", "0", "command") != "log-it" ||
		at(m, "hooks", "PreToolUse", "0", "hooks", "0", "command") != "my-linter" {
		t.Errorf("other settings lost: %v", m)
	}
	groups, _ := at(m, "hooks", "PreToolUse").([]any)
	if len(groups) != 2 {
		t.Fatalf("PreToolUse has %d groups, want 2 (ours replaced in place): %v", len(groups), groups)
	}
	want := "APPROVALBOT_URL=http://127.0.0.1:9999 " + exe + " hook claude"
	if got := at(m, "hooks", "PreToolUse", "1", "hooks", "0", "command"); got != want {
		t.Errorf("command %v, want %q", got, want)
	}
	if got := at(m, "hooks", "PreToolUse", "1", "hooks", "0", "timeout"); got != float64(900) {
		t.Errorf("timeout %v", got)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("mode changed to %v", st.Mode().Perm())
	}
	backups, _ := filepath.Glob(p + ".approvalbot-*.bak")
	if len(backups) != 1 {
		t.Fatalf("backups %v, want 1", backups)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != old {
		t.Errorf("backup holds %s", b)
	}
	if !strings.Contains(out, "updated "+p) || !strings.Contains(out, backups[0]) {
		t.Errorf("output:\n%s", out)
	}

	before, _ := os.ReadFile(p)
	code, out, _ = runInstallIn(t, home, map[string]string{"APPROVALBOT_URL": "http://127.0.0.1:9999"}, "claude")
	after, _ := os.ReadFile(p)
	if code != 0 || !bytes.Equal(before, after) || !strings.Contains(out, "unchanged") {
		t.Errorf("second run: exit %d, changed %v, output:\n%s", code, !bytes.Equal(before, after), out)
	}
	if b, _ := filepath.Glob(p + ".approvalbot-*.bak"); len(b) != 1 {
		t.Errorf("second run made a backup: %v", b)
	}

	// A different --timeout replaces the entry again, with a new backup.
	code, _, _ = runInstallIn(t, home, map[string]string{"APPROVALBOT_URL": "http://127.0.0.1:9999"}, "claude", "--timeout", "100s")
	m = readJSONFile(t, p)
	if code != 0 || at(m, "hooks", "PreToolUse", "1", "hooks", "0", "timeout") != float64(120) ||
		at(m, "hooks", "PreToolUse", "1", "hooks", "0", "command") != want+" --timeout 1m40s" || len(at(m, "hooks", "PreToolUse").([]any)) != 2 {
		t.Errorf("after --timeout 100s: %v", at(m, "hooks", "PreToolUse"))
	}
	if b, _ := filepath.Glob(p + ".approvalbot-*.bak"); len(b) != 2 {
		t.Errorf("backups %v, want 2", b)
	}
}

// TestInstallDryRunWritesNothing: --dry-run prints the file it would write.
func TestInstallDryRunWritesNothing(t *testing.T) {
	for _, agent := range []string{"claude", "codex", "gemini", "copilot", "cursor", "opencode"} {
		home := t.TempDir()
		code, out, errOut := runInstallIn(t, home, nil, agent, "--dry-run")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", agent, code, errOut)
		}
		if !strings.Contains(out, "would create") || !strings.Contains(out, " hook "+agent) && !strings.Contains(out, `"hook","`+agent+`"`) {
			t.Errorf("%s: output:\n%s", agent, out)
		}
		var files []string
		_ = filepath.Walk(home, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		if len(files) != 0 {
			t.Errorf("%s: --dry-run wrote %v", agent, files)
		}
	}
}

// TestInstallProjectAndPlugin: --project writes the project's files; the
// opencode plugin calls this binary's `hook opencode`.
func TestInstallProjectAndPlugin(t *testing.T) {
	exe := testExe(t)
	home, proj := t.TempDir(), t.TempDir()
	want := map[string]string{
		"claude":   ".claude/settings.json",
		"codex":    ".codex/hooks.json",
		"gemini":   ".gemini/settings.json",
		"copilot":  ".github/hooks/approvalbot.json",
		"cursor":   ".cursor/hooks.json",
		"opencode": ".opencode/plugin/approvalbot.js",
	}
	for agent, rel := range want {
		if code, _, errOut := runInstallIn(t, home, nil, agent, "--project", proj); code != 0 {
			t.Fatalf("%s: exit %d: %s", agent, code, errOut)
		}
		if _, err := os.Stat(filepath.Join(proj, rel)); err != nil {
			t.Errorf("%s: %v", agent, err)
		}
	}
	if m := readJSONFile(t, filepath.Join(proj, ".github/hooks/approvalbot.json")); at(m, "version") != float64(1) {
		t.Errorf("copilot repo hooks file has no version 1: %v", m)
	}
	js, _ := os.ReadFile(filepath.Join(proj, ".opencode/plugin/approvalbot.js"))
	argv, _ := json.Marshal([]string{exe, "hook", "opencode"})
	if !strings.Contains(string(js), "const HOOK = "+string(argv)+";") || !strings.Contains(string(js), `"tool.execute.before"`) {
		t.Errorf("plugin:\n%s", js)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("--project wrote into HOME: %v", entries)
	}
}

// TestInstallRefuses: a broken settings file is left alone; bad arguments
// exit 2.
func TestInstallRefuses(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"hooks": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runInstallIn(t, home, nil, "gemini")
	if code != exitFailure || !strings.Contains(errOut, "not valid JSON") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(p); string(b) != `{"hooks": [` {
		t.Errorf("broken file changed: %s", b)
	}
	if err := os.WriteFile(p, []byte(`{"hooks": {"BeforeTool": {"x": 1}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runInstallIn(t, home, nil, "gemini"); code != exitFailure || !strings.Contains(errOut, "not a list") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	for _, args := range [][]string{{}, {"windsurf"}, {"claude", "extra"}, {"claude", "--project", filepath.Join(home, "nope")}, {"claude", "--timeout", "0s"}} {
		if code, _, _ := runInstallIn(t, home, nil, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
	// Comments (Gemini allows them) are read; the note says they go.
	if err := os.WriteFile(p, []byte("{\n // mine\n \"ui\": {\"theme\": \"dark\"},\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runInstallIn(t, home, nil, "gemini")
	if code != 0 || !strings.Contains(out, "comments are not kept") || at(readJSONFile(t, p), "ui", "theme") != "dark" {
		t.Errorf("exit %d: %s%s", code, out, errOut)
	}
	// An approval timeout above the hook's deadline is pointed out.
	_, out, _ = runInstallIn(t, t.TempDir(), map[string]string{"APPROVALBOT_TIMEOUT": "20m"}, "cursor")
	if !strings.Contains(out, "APPROVALBOT_TIMEOUT (20m0s) is not below") {
		t.Errorf("no timeout warning:\n%s", out)
	}
}

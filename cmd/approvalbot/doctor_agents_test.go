package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentCase is one agent set-up for doctor to judge: installs run first,
// then fixture files (testdata/doctor) are written over them.
type agentCase struct {
	name    string
	install [][]string        // `approvalbot install` argument lists; @PROJECT@ is the project dir
	files   map[string]string // "~/path" or "@PROJECT@/path" → fixture file name
	env     map[string]string // extra environment of the agents
	agent   string
	ok      bool
	want    []string // substrings of the line and its fix, after placeholders
}

func TestDoctorAgents(t *testing.T) {
	exe := testExe(t)
	const (
		claudeUser = "~/.claude/settings.json"
		codexUser  = "~/.codex/hooks.json"
		codexConf  = "~/.codex/config.toml"
		geminiUser = "~/.gemini/settings.json"
		trustFile  = "~/.gemini/trustedFolders.json"
	)
	codex := [][]string{{"codex"}}
	gemini := [][]string{{"gemini"}}
	tests := []agentCase{
		{name: "nothing installed", agent: "claude", ok: true,
			want: []string{"not set up: `approvalbot install claude` gates Claude Code (looked in ~/.claude/settings.json, @PROJECT@/.claude/settings.json)"}},
		{name: "claude installed", install: [][]string{{"claude"}}, agent: "claude", ok: true,
			want: []string{"~/.claude/settings.json runs @BIN@"}},
		{name: "claude in the project", install: [][]string{{"claude", "--project", "@PROJECT@"}}, agent: "claude", ok: true,
			want: []string{"@PROJECT@/.claude/settings.json runs @BIN@"}},
		{name: "claude binary gone", files: map[string]string{claudeUser: "claude-missing-binary.json"}, agent: "claude",
			want: []string{"the hook runs /opt/gone/approvalbot, which does not exist", "run `approvalbot install claude` again with the approvalbot binary you keep"}},
		{name: "claude binary not executable", files: map[string]string{claudeUser: "claude-not-executable.json"}, agent: "claude",
			want: []string{"the hook runs @NOEXEC@, which is not executable"}},
		{name: "claude fails open", files: map[string]string{claudeUser: "claude-no-onfailure.json"}, agent: "claude",
			want: []string{`runs @BIN@; the hook lacks "onFailure": "block", so Claude Code runs the call when the hook fails`, "run `approvalbot install claude` again"}},
		{name: "claude from PATH, not found", files: map[string]string{claudeUser: "claude-path.json"}, env: map[string]string{"PATH": "/nonexistent"}, agent: "claude",
			want: []string{"the hook runs approvalbot, which is not on this PATH"}},
		{name: "claude settings broken", files: map[string]string{claudeUser: "claude-broken.json"}, agent: "claude",
			want: []string{"is not valid JSON", "fix ~/.claude/settings.json or move it away, then run `approvalbot install claude` again"}},

		{name: "codex not trusted", install: codex, agent: "codex",
			want: []string{"~/.codex/hooks.json runs @BIN@; not trusted yet: open codex → /hooks", "--dangerously-bypass-hook-trust"}},
		{name: "codex trusted", install: codex, files: map[string]string{codexConf: "codex-trusted.toml"}, agent: "codex", ok: true,
			want: []string{"runs @BIN@; trusted in Codex (/hooks)"}},
		{name: "codex trusted in the second group", files: map[string]string{codexUser: "codex-hooks-second.json", codexConf: "codex-trusted.toml"}, agent: "codex", ok: true,
			want: []string{"trusted in Codex"}},
		{name: "codex trust for other hooks only", install: codex, files: map[string]string{codexConf: "codex-trusted-other.toml"}, agent: "codex",
			want: []string{"not trusted yet: open codex → /hooks"}},
		{name: "codex hook disabled", install: codex, files: map[string]string{codexConf: "codex-disabled.toml"}, agent: "codex",
			want: []string{"disabled in Codex's /hooks", "enable approvalbot's hook"}},
		{name: "codex project hook trusted", install: [][]string{{"codex", "--project", "@PROJECT@"}},
			files: map[string]string{codexConf: "codex-project-trusted.toml"}, agent: "codex", ok: true,
			want: []string{"@PROJECT@/.codex/hooks.json runs @BIN@; trusted in Codex"}},
		{name: "codex with CODEX_HOME", install: [][]string{{"codex"}}, env: map[string]string{"CODEX_HOME": "@PROJECT@/codexhome"}, agent: "codex",
			want: []string{"@PROJECT@/codexhome/hooks.json runs @BIN@; not trusted yet"}},

		{name: "gemini folder not trusted", install: gemini, agent: "gemini",
			want: []string{"~/.gemini/settings.json runs @BIN@; @PROJECT@ is not trusted yet: Gemini CLI skips hooks there", "start gemini in @PROJECT@ and trust the folder"}},
		{name: "gemini folder trusted", install: gemini, files: map[string]string{trustFile: "gemini-trust-folder.json"}, agent: "gemini", ok: true,
			want: []string{"@PROJECT@ is a trusted folder"}},
		{name: "gemini parent trusted", install: gemini, files: map[string]string{trustFile: "gemini-trust-parent.json"}, agent: "gemini", ok: true,
			want: []string{"@PROJECT@ is a trusted folder"}},
		{name: "gemini only siblings and children trusted", install: gemini, files: map[string]string{trustFile: "gemini-trust-other.json"}, agent: "gemini",
			want: []string{"@PROJECT@ is not trusted yet"}},
		{name: "gemini folder distrusted", install: gemini, files: map[string]string{trustFile: "gemini-do-not-trust.json"}, agent: "gemini",
			want: []string{"@PROJECT@ is marked untrusted", "/permissions"}},
		{name: "gemini trust file elsewhere", install: gemini, files: map[string]string{"@PROJECT@/trust.json": "gemini-trust-folder.json"},
			env: map[string]string{"GEMINI_CLI_TRUSTED_FOLDERS_PATH": "@PROJECT@/trust.json"}, agent: "gemini", ok: true,
			want: []string{"@PROJECT@ is a trusted folder"}},
		{name: "gemini folder trust off", files: map[string]string{geminiUser: "gemini-trust-off.json"}, agent: "gemini", ok: true,
			want: []string{"folder trust is off in Gemini CLI"}},

		{name: "copilot installed", install: [][]string{{"copilot"}}, agent: "copilot", ok: true,
			want: []string{"~/.copilot/settings.json runs @BIN@"}},
		{name: "copilot in the project", install: [][]string{{"copilot", "--project", "@PROJECT@"}}, agent: "copilot", ok: true,
			want: []string{"@PROJECT@/.github/hooks/approvalbot.json runs @BIN@"}},
		{name: "cursor installed", install: [][]string{{"cursor"}}, agent: "cursor", ok: true,
			want: []string{"~/.cursor/hooks.json runs @BIN@"}},
		{name: "cursor fails open", files: map[string]string{"~/.cursor/hooks.json": "cursor-fail-open.json"}, agent: "cursor",
			want: []string{`the hook lacks "failClosed": true, so Cursor runs the call when the hook fails`, "run `approvalbot install cursor` again"}},
		{name: "opencode installed", install: [][]string{{"opencode"}}, agent: "opencode", ok: true,
			want: []string{"~/.config/opencode/plugin/approvalbot.js runs @BIN@"}},
		{name: "opencode binary gone", files: map[string]string{"~/.config/opencode/plugin/approvalbot.js": "opencode-missing-binary.js"}, agent: "opencode",
			want: []string{"the hook runs /opt/gone/approvalbot, which does not exist"}},
		{name: "opencode plugin not ours", files: map[string]string{"~/.config/opencode/plugin/approvalbot.js": "opencode-foreign.js"}, agent: "opencode",
			want: []string{"not approvalbot's plugin, or an old one", "run `approvalbot install opencode` again"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, project := t.TempDir(), t.TempDir()
			noexec := filepath.Join(project, "approvalbot-copy")
			if err := os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			fill := strings.NewReplacer("@BIN@", exe, "@HOME@", home, "@PROJECT@", project, "@NOEXEC@", noexec).Replace
			vars := map[string]string{}
			for k, v := range tt.env {
				vars[k] = fill(v)
				if k == "PATH" {
					t.Setenv(k, vars[k])
				}
			}
			for _, args := range tt.install {
				var a []string
				for _, s := range args {
					a = append(a, fill(s))
				}
				if code, _, errOut := runInstallIn(t, home, vars, a...); code != 0 {
					t.Fatalf("install %v: %s", a, errOut)
				}
			}
			for dst, fixture := range tt.files {
				b, err := os.ReadFile(filepath.Join("testdata", "doctor", fixture))
				if err != nil {
					t.Fatal(err)
				}
				p := fill(strings.Replace(dst, "~", home, 1))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(fill(string(b))), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			e := &env{getenv: func(k string) string {
				if k == "HOME" {
					return home
				}
				return vars[k]
			}}
			d := agentDoctor{e: e, home: home, project: project, exe: exe}
			got := d.check(tt.agent)
			if len(got) != 1 {
				t.Fatalf("%d lines, want 1: %+v", len(got), got)
			}
			c := got[0]
			text := c.msg + "\nfix: " + c.fix
			if c.name != tt.agent+" hook" || c.ok != tt.ok {
				t.Errorf("%s ok=%v, want %s hook ok=%v:\n%s", c.name, c.ok, tt.agent, tt.ok, text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, fill(w)) {
					t.Errorf("lacks %q:\n%s", fill(w), text)
				}
			}
			if c.ok != (c.fix == "") {
				t.Errorf("ok=%v with fix %q: a failing line says what to do, a passing one has no fix", c.ok, c.fix)
			}
		})
	}
}

// TestDoctorAgentsInReport: the agents' lines are in doctor's report, and
// one that fails makes doctor fail.
func TestDoctorAgentsInReport(t *testing.T) {
	project := t.TempDir()
	if code, _, errOut := runInstallIn(t, t.TempDir(), nil, "codex", "--project", project); code != 0 {
		t.Fatal(errOut)
	}
	code, out := runDoctorWith(t, nil, "--project", project)
	for _, w := range []string{
		"[ok  ] claude hook: not set up",
		"[FAIL] codex hook: " + project + "/.codex/hooks.json runs ",
		"; not trusted yet: open codex → /hooks\n       fix: open `codex`, then /hooks",
		"[ok  ] opencode hook: not set up",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("lacks %q:\n%s", w, out)
		}
	}
	if code != exitFailure {
		t.Errorf("exit %d", code)
	}
}

package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
)

// runCLI runs approvalbot with args in-process, with no environment.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := dispatch(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func TestVersionOnce(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		code, out, _ := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d", args, code)
		}
		f := strings.Fields(out)
		// approvalbot VERSION COMMIT DATE [dirty] goVERSION
		if len(f) < 5 || f[0] != "approvalbot" || !strings.HasPrefix(f[len(f)-1], "go") {
			t.Errorf("%v: %q", args, out)
		}
		seen := map[string]bool{}
		for _, w := range f {
			if seen[w] && w != "unknown" {
				t.Errorf("%v: %q repeats %q", args, out, w)
			}
			seen[w] = true
		}
		if strings.Contains(out, "(devel)") {
			t.Errorf("%v: %q", args, out)
		}
	}
}

func TestHelpTopics(t *testing.T) {
	code, out, _ := runCLI(t, "help")
	if code != exitOK || !strings.Contains(out, "completion") || !strings.Contains(out, "--version") {
		t.Fatalf("help: %d %q", code, out)
	}
	code, out, _ = runCLI(t, "help", "version")
	if code != exitOK || !strings.Contains(out, "usage: approvalbot version") {
		t.Errorf("help version: %d %q", code, out)
	}
	code, out, _ = runCLI(t, "help", "completion")
	if code != exitOK || !strings.Contains(out, "bash|zsh|fish") {
		t.Errorf("help completion: %d %q", code, out)
	}
	if code, _, errs := runCLI(t, "help", "nope"); code != exitUsage || !strings.Contains(errs, "unknown command") {
		t.Errorf("help nope: %d %q", code, errs)
	}
	if code, _, _ := runCLI(t); code != exitUsage {
		t.Errorf("no arguments: exit %d", code)
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, _ := runCLI(t, "completion", sh)
		if code != exitOK || !strings.Contains(out, "serve") || !strings.Contains(out, "watch") {
			t.Fatalf("completion %s: %d %q", sh, code, out)
		}
		if sh == "bash" {
			// The script must be valid bash, and complete a prefix.
			script := out + "\nCOMP_WORDS=(approvalbot wa); COMP_CWORD=1; _approvalbot; echo \"${COMPREPLY[@]}\"\n"
			got, err := exec.Command("bash", "-c", script).Output()
			if err != nil || strings.TrimSpace(string(got)) != "watch" {
				t.Errorf("bash completion of `wa`: %q %v", got, err)
			}
		}
	}
	if code, _, _ := runCLI(t, "completion", "tcsh"); code != exitUsage {
		t.Errorf("completion tcsh: exit %d", code)
	}
}

// TestReadmeExampleRules runs the README's check example on the shipped
// example rules file: ci-bot's own rule allows `npm test`, others ask.
func TestReadmeExampleRules(t *testing.T) {
	rules := "../../config/example-rules.jsonc"
	env := map[string]string{"HOME": t.TempDir()}
	got := checkJSONOut(t, env, "--rules", rules, "--agent", "ci-bot", "--cwd", "/work/proj", "--", "npm test")
	if got.Decision != "allow" {
		t.Errorf("ci-bot npm test: %+v", got)
	}
	got = checkJSONOut(t, env, "--rules", rules, "--cwd", "/work/proj", "--", "npm test")
	if got.Decision != "ask" {
		t.Errorf("npm test without the agent: %+v", got)
	}
	got = checkJSONOut(t, env, "--rules", rules, "--agent", "ci-bot", "--cwd", "/work/proj", "--", "rm -rf build")
	if got.Decision != "deny" {
		t.Errorf("rm -rf: %+v", got)
	}
}

func TestRulesLint(t *testing.T) {
	bad := writeRules(t, `{"Bash": {"*": "ask", "git * main": "allow", "python *": "allow"}, "Raed": "deny"}`)
	code, out, _ := runCLI(t, "rules", "lint", bad)
	if code != exitFailure {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{":1: Bash: git * main: the `*` in the middle", "python *` runs any Python code", "Raed"} {
		if !strings.Contains(out, want) {
			t.Errorf("lint output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, "rules", "lint", "../../config/example-rules.jsonc")
	if code != exitOK {
		t.Errorf("example rules: exit %d:\n%s", code, out)
	}
	// check says the same on stderr.
	_, _, errs := runCheckCmd(t, map[string]string{"HOME": "/home/u"}, "--rules", bad, "--cwd", "/work/proj", "--", "ls")
	if !strings.Contains(errs, "warning: ") || !strings.Contains(errs, "git * main") {
		t.Errorf("check stderr lacks the lint warnings: %q", errs)
	}
	if code, _, _ := runCLI(t, "rules", "lint", "/nonexistent.jsonc"); code != exitUsage {
		t.Errorf("missing file: exit %d", code)
	}
}

// TestEveryCommandHelp: --help on every command exits 0 and says how to
// use it; serve's lists every setting.
func TestEveryCommandHelp(t *testing.T) {
	for name := range commands() {
		code, out, errs := runCLI(t, name, "--help")
		if code != exitOK || !strings.Contains(out+errs, "usage: approvalbot "+name) {
			t.Errorf("%s --help: exit %d\n%s%s", name, code, out, errs)
		}
	}
	_, out, _ := runCLI(t, "serve", "--help")
	for _, s := range []string{"APPROVALBOT_DATA_DIR", "APPROVALBOT_LISTEN", "APPROVALBOT_RULES", "APPROVALBOT_TIMEOUT", "APPROVALBOT_TELEGRAM_TOKEN"} {
		if !strings.Contains(out, s) {
			t.Errorf("serve --help lacks %s:\n%s", s, out)
		}
	}
}

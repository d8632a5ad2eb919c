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

const checkRules = `{
  "*": "ask",
  "Bash": {
    "*": "ask",
    "git status *": "allow",
    "git push *": "ask",
    "rm *": "deny",
  },
  "Write": { "*": "ask", "./*": "allow", "*.env": "deny" },
  "agents": { "ci": { "Bash": { "git push *": "allow" } } },
}
`

// runCheckCmd runs `approvalbot check args...` in-process.
func runCheckCmd(t *testing.T, environ map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{
		stdin:  strings.NewReader(""),
		stdout: &out,
		stderr: &errb,
		getenv: func(k string) string { return environ[k] },
	}
	code = dispatch(context.Background(), e, append([]string{"check"}, args...))
	return code, out.String(), errb.String()
}

func writeRules(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rules.jsonc")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

type checkJSON struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Commands []struct {
		Command  string `json:"command"`
		Decision string `json:"decision"`
		Rule     *struct {
			Layer   string `json:"layer"`
			File    string `json:"file"`
			Line    int    `json:"line"`
			Pattern string `json:"pattern"`
		} `json:"rule"`
	} `json:"commands"`
	OutsideProject bool     `json:"outside_project"`
	Always         []string `json:"always"`
	RulesFile      string   `json:"rules_file"`
}

func checkJSONOut(t *testing.T, environ map[string]string, args ...string) checkJSON {
	t.Helper()
	code, out, errOut := runCheckCmd(t, environ, append([]string{"--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got checkJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return got
}

func TestCheckDecisions(t *testing.T) {
	rules := writeRules(t, checkRules)
	env := map[string]string{"HOME": "/home/u"}
	tests := []struct {
		name     string
		args     []string
		decision string
		lines    []int // rule line per sub-command (0: no rule)
	}{
		{"allow", []string{"--cwd", "/work/proj", "--", "git status"}, "allow", []int{5}},
		{"deny wins", []string{"--cwd", "/work/proj", "--", "git status && rm -rf build"}, "deny", []int{5, 7}},
		{"ask", []string{"--cwd", "/work/proj", "--", "git", "push", "origin", "main"}, "ask", []int{6}},
		{"agent layer", []string{"--agent", "ci", "--cwd", "/work/proj", "--", "git push origin main"}, "allow", []int{10}},
		{"strict mode", []string{"--mode", "strict", "--cwd", "/work/proj", "--", "git push"}, "deny", []int{6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkJSONOut(t, env, append([]string{"--rules", rules}, tt.args...)...)
			if got.Decision != tt.decision {
				t.Fatalf("decision %s, want %s (%s)", got.Decision, tt.decision, got.Reason)
			}
			if len(got.Commands) != len(tt.lines) {
				t.Fatalf("commands %+v, want %d", got.Commands, len(tt.lines))
			}
			for i, line := range tt.lines {
				c := got.Commands[i]
				if c.Rule == nil || c.Rule.Line != line || c.Rule.File != rules {
					t.Errorf("command %d %q: rule %+v, want %s:%d", i, c.Command, c.Rule, rules, line)
				}
			}
			if got.Reason == "" || got.RulesFile != rules {
				t.Errorf("reason %q rules_file %q", got.Reason, got.RulesFile)
			}
		})
	}
}

func TestCheckJSONFields(t *testing.T) {
	rules := writeRules(t, checkRules)
	got := checkJSONOut(t, map[string]string{"HOME": "/home/u"}, "--rules", rules, "--cwd", "/work/proj", "--", "git push origin main > /tmp/log")
	if got.Decision != "ask" || !got.OutsideProject {
		t.Fatalf("got %+v", got)
	}
	if len(got.Always) != 2 || got.Always[0] != "git push *" || got.Always[1] != "/tmp/log" {
		t.Errorf("always %q", got.Always)
	}
	// The raw object has the contract's field names.
	_, out, _ := runCheckCmd(t, map[string]string{"HOME": "/home/u"}, "--json", "--rules", rules, "--cwd", "/work/proj", "--", "ls")
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"decision", "reason", "commands", "outside_project", "always"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("JSON output lacks %q: %s", k, out)
		}
	}
}

func TestCheckInputForFileTools(t *testing.T) {
	rules := writeRules(t, checkRules)
	env := map[string]string{"HOME": "/home/u"}
	got := checkJSONOut(t, env, "--rules", rules, "--cwd", "/work/proj", "--tool", "Write", "--input", `{"file_path":".env"}`)
	if got.Decision != "deny" || len(got.Commands) != 1 || got.Commands[0].Command != "/work/proj/.env" || got.Commands[0].Rule.Line != 9 {
		t.Fatalf("Write .env: %+v", got)
	}
	got = checkJSONOut(t, env, "--rules", rules, "--cwd", "/work/proj", "--tool", "Write", "--input", `{"file_path":"src/a.go"}`)
	if got.Decision != "allow" {
		t.Fatalf("Write src/a.go: %+v", got)
	}
	// The default rules, and the rules file protected from writes.
	got = checkJSONOut(t, env, "--cwd", "/work/proj", "--tool", "Write", "--input", `{"file_path":".env"}`)
	if got.Decision != "deny" || got.RulesFile != "(default rules)" {
		t.Fatalf("default rules Write .env: %+v", got)
	}
	got = checkJSONOut(t, env, "--rules", rules, "--cwd", filepath.Dir(rules), "--tool", "Write", "--input", `{"file_path":"rules.jsonc"}`)
	if got.Decision != "deny" || got.Commands[0].Rule.Layer != "builtin" {
		t.Fatalf("Write to the rules file: %+v", got)
	}
}

func TestCheckRulesFromEnvironment(t *testing.T) {
	rules := writeRules(t, `{"Read": "deny"}`)
	got := checkJSONOut(t, map[string]string{"HOME": "/home/u", "APPROVALBOT_RULES": rules},
		"--cwd", "/work/proj", "--tool", "Read", "--input", `{"file_path":"a.go"}`)
	if got.Decision != "deny" || got.RulesFile != rules {
		t.Fatalf("got %+v", got)
	}
	// --rules beats the environment, and nothing is merged: no rule asks.
	other := writeRules(t, `{}`)
	got = checkJSONOut(t, map[string]string{"HOME": "/home/u", "APPROVALBOT_RULES": rules},
		"--rules", other, "--cwd", "/work/proj", "--tool", "Read", "--input", `{"file_path":"a.go"}`)
	if got.Decision != "ask" {
		t.Fatalf("got %+v", got)
	}
}

func TestCheckHumanOutput(t *testing.T) {
	rules := writeRules(t, checkRules)
	code, out, _ := runCheckCmd(t, map[string]string{"HOME": "/home/u"}, "--rules", rules, "--cwd", "/work/proj", "--", "git status && git push > /etc/x")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"decision: ask", "reason:", "git status", rules + ":5", "outside the project: /etc/x", "always would save: Bash: git push *"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Agent text never reaches the terminal raw.
	_, out, _ = runCheckCmd(t, map[string]string{"HOME": "/home/u"}, "--rules", rules, "--cwd", "/work/proj", "--tool", "Read", "--input", `{"file_path":"a\u001b[31mb\u202e"}`)
	if strings.ContainsRune(out, 0x1b) || strings.ContainsRune(out, 0x202e) {
		t.Errorf("control characters in output: %q", out)
	}
}

// TestCheckNotUnderstood: an ask the analysis raises names what was not
// understood, and says that only a person can answer it.
func TestCheckNotUnderstood(t *testing.T) {
	rules := writeRules(t, `{"Bash": {"*": "ask", "sort *": "allow"}}`)
	env := map[string]string{"HOME": "/home/u"}
	_, out, _ := runCheckCmd(t, env, "--rules", rules, "--cwd", "/work/proj", "--", "sort --c=x f")
	for _, want := range []string{"decision: ask", "not understood: ambiguous option --c of sort", "only a person can answer"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = runCheckCmd(t, env, "--json", "--rules", rules, "--cwd", "/work/proj", "--", "sort --c=x f")
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if string(raw["uncertain"]) != "true" {
		t.Errorf("uncertain = %s in %s", raw["uncertain"], out)
	}
	// An ask from the rules alone is not marked.
	_, out, _ = runCheckCmd(t, env, "--rules", rules, "--cwd", "/work/proj", "--", "make")
	if strings.Contains(out, "only a person") {
		t.Errorf("a rule's ask marked as uncertain:\n%s", out)
	}
}

func TestCheckUsageErrors(t *testing.T) {
	good := writeRules(t, checkRules)
	bad := writeRules(t, "{\n  \"Bash\": {\n    \"git [\": \"allow\"\n  }\n}")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"bad rules file", nil, []string{"--rules", bad, "--", "ls"}, bad + ":3"},
		{"bad rules file from env", map[string]string{"APPROVALBOT_RULES": bad}, []string{"--", "ls"}, bad + ":3"},
		{"missing rules file", nil, []string{"--rules", "/nonexistent/rules.jsonc", "--", "ls"}, "read rules file"},
		{"unknown flag", nil, []string{"--bogus", "--", "ls"}, "bogus"},
		{"nothing to check", nil, []string{"--rules", good}, "nothing to check"},
		{"bad input json", nil, []string{"--rules", good, "--tool", "Write", "--input", `{"file_path":`}, "--input is not a JSON object"},
		{"input not an object", nil, []string{"--rules", good, "--tool", "Write", "--input", `["x"]`}, "--input is not a JSON object"},
		{"both input and command", nil, []string{"--rules", good, "--input", `{}`, "--", "ls"}, "not both"},
		{"command for a file tool", nil, []string{"--rules", good, "--tool", "Write", "--", "x"}, "--input"},
		{"bad mode", nil, []string{"--rules", good, "--mode", "yolo", "--", "ls"}, "unknown mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			environ := map[string]string{"HOME": "/home/u"}
			for k, v := range tt.env {
				environ[k] = v
			}
			code, out, errOut := runCheckCmd(t, environ, tt.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, exitUsage, out, errOut)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q lacks %q", errOut, tt.want)
			}
		})
	}
}

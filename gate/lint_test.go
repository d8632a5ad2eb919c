package gate_test

import (
	"strings"
	"testing"

	"approvalbot/config"
	"approvalbot/gate"
)

func TestLint(t *testing.T) {
	spec, err := config.ParseRules("rules.jsonc", []byte(`{
  "Bash": {
    "*": "ask",
    "git push *": "allow",
    "git * main": "allow",
    "python *": "allow",
    "npm test *": "allow",
    "npm *": "ask",
    "ls *": "allow",
    "l*": "ask"
  },
  "bash_tool": { "*": "deny" },
  "{Raed,Wirte}": "deny",
  "mcp__github__*": "ask",
  "agents": { "ci": { "Bash": { "git *": "allow" } } }
}`), "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	ws := gate.Lint(spec)
	var got []string
	for _, w := range ws {
		got = append(got, w.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"rules.jsonc:9: Bash: ls *: never decides anything: the later rule at line 10",
		"rules.jsonc:5: Bash: git * main: the `*` in the middle spans any words",
		"rules.jsonc:6: Bash: python *: `python *` runs any Python code",
		"rules.jsonc:7: Bash: npm test *: never decides anything: the later rule at line 8",
		"rules.jsonc:12: bash_tool: *: no agent approvalbot knows has a tool named bash_tool",
		"rules.jsonc:13: {Raed,Wirte}: *: the tool glob {Raed,Wirte} matches no tool",
		"git *` allows every git subcommand",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("lint lacks %q:\n%s", want, all)
		}
	}
	for _, not := range []string{"mcp__github__", "rules.jsonc:3:", "rules.jsonc:4:"} {
		if strings.Contains(all, not) {
			t.Errorf("lint warns about %q:\n%s", not, all)
		}
	}
}

// The embedded defaults lint clean, apart from the deliberate catch-alls.
func TestLintDefaultRules(t *testing.T) {
	spec, err := config.ParseRules(config.DefaultRulesName, config.DefaultRules(), "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range gate.Lint(spec) {
		t.Errorf("default rules: %s", w)
	}
}

func TestCompileHintForBracket(t *testing.T) {
	_, err := gate.Compile(gate.PolicySpec{Rules: []gate.RuleSpec{{Tool: "Bash", Pattern: "[ *", Action: gate.Allow, File: "r.jsonc", Line: 3}}})
	if err == nil || !strings.Contains(err.Error(), "write `\\\\[ *`") {
		t.Errorf("error %v lacks the hint", err)
	}
}

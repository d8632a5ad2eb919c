package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"approvalbot/gate"
)

const home = "/home/u"

func TestParseRulesKeepsOrderAndLines(t *testing.T) {
	spec, err := LoadRules("testdata/rules.jsonc", home)
	if err != nil {
		t.Fatal(err)
	}
	type rl struct {
		tool, pattern string
		action        gate.Action
		line          int
	}
	want := []rl{
		{"*", "*", gate.Ask, 3},
		{"Read", "*", gate.Allow, 5},
		{"Read", "*.env", gate.Deny, 6},
		{"Read", "*.env.example", gate.Allow, 7},
		{"Bash", "*", gate.Ask, 10},
		{"Bash", "git status", gate.Allow, 10},
		{"Bash", "git log *", gate.Allow, 10},
		{"mcp__github__*", "*", gate.Ask, 11},
		{"Write", "*", gate.Deny, 18},
	}
	if len(spec.Rules) != len(want) {
		t.Fatalf("got %d rules, want %d: %+v", len(spec.Rules), len(want), spec.Rules)
	}
	for i, w := range want {
		g := spec.Rules[i]
		if g.Tool != w.tool || g.Pattern != w.pattern || g.Action != w.action || g.Line != w.line || g.File != "testdata/rules.jsonc" {
			t.Errorf("rule %d = %+v, want %+v", i, g, w)
		}
	}
	ci := spec.Agents["ci"]
	if len(ci) != 1 || ci[0].Tool != "Bash" || ci[0].Pattern != "make test *" || ci[0].Line != 15 {
		t.Errorf("agent rules %+v", spec.Agents)
	}
	if spec.ToolKinds["mcp__fs__write"] != gate.KindWrite || spec.ToolKinds["run"] != gate.KindShell {
		t.Errorf("kinds %+v", spec.ToolKinds)
	}
	abs, _ := filepath.Abs("testdata/rules.jsonc")
	if len(spec.Protected) != 1 || spec.Protected[0] != abs {
		t.Errorf("protected %v, want the rules file %s", spec.Protected, abs)
	}
	if spec.Home != home {
		t.Errorf("home %q", spec.Home)
	}
	// The loaded spec behaves as written: order is meaning.
	p, err := gate.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]gate.Action{".env": gate.Deny, ".env.example": gate.Allow, "a.go": gate.Allow} {
		in, _ := json.Marshal(map[string]string{"file_path": path})
		ev := p.Evaluate(gate.Call{Tool: "Read", Input: in, Cwd: "/work/proj"}, gate.Env{})
		if ev.Decision != want {
			t.Errorf("Read %s: %s, want %s", path, ev.Decision, want)
		}
	}
	in, _ := json.Marshal(map[string]string{"file_path": abs})
	if ev := p.Evaluate(gate.Call{Tool: "mcp__fs__write", Input: in}, gate.Env{Mode: gate.ModeApproveAll}); ev.Decision != gate.Deny {
		t.Errorf("write to the rules file: %s (%s)", ev.Decision, ev.Reason)
	}
}

func TestParseRulesErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"not an object", `["Bash"]`, "r.jsonc:1: the rules file must be a JSON object"},
		{"syntax", "{\n\"Bash\": }", "r.jsonc: hujson: line 2"},
		{"unknown action", "{\n  \"Bash\": {\n    \"git *\": \"maybe\"\n  }\n}", `r.jsonc:3: Bash: "git *": unknown action "maybe"`},
		{"unknown plain action", "{\n\"Read\": \"Allow\"}", `r.jsonc:2: Read: unknown action "Allow"`},
		{"wrong type", "{\n\n\"Bash\": 3}", `r.jsonc:3: Bash: want an action`},
		{"pattern value wrong type", "{\"Bash\": {\n\"ls\": [\"allow\"]}}", `r.jsonc:2: Bash: "ls": want an action`},
		{"duplicate tool", "{\"Bash\": \"ask\",\n\"Bash\": \"allow\"}", `r.jsonc:2: duplicate key "Bash"`},
		{"duplicate pattern", "{\"Bash\": {\"ls\": \"allow\",\n\n\"ls\": \"deny\"}}", `r.jsonc:3: duplicate key "ls"`},
		{"bad glob", "{\n\"Bash\": {\n\"*\": \"ask\",\n\"git [\": \"allow\"}}", `r.jsonc:4: Bash: bad pattern "git ["`},
		{"bad tool glob", "{\n\"mcp__{a\": \"ask\"}", `r.jsonc:2: bad tool name glob "mcp__{a"`},
		{"empty pattern", "{\"Bash\": {\"\": \"allow\"}}", `r.jsonc:1: Bash: empty pattern`},
		{"empty tool", "{\"\": \"allow\"}", `r.jsonc:1: empty tool name`},
		{"agents wrong type", "{\"agents\": []}", `r.jsonc:1: "agents": want an object`},
		{"agent wrong type", "{\"agents\": {\n\"ci\": \"allow\"}}", `r.jsonc:2: agent "ci": want an object`},
		{"agent bad action", "{\"agents\": {\"ci\": {\n\"Bash\": {\"x\": \"nope\"}}}}", `r.jsonc:2: Bash: "x": unknown action "nope"`},
		{"agent bad glob", "{\"agents\": {\"ci\": {\n\"Bash\": {\"[\": \"allow\"}}}}", `r.jsonc:2: agent "ci": Bash: bad pattern "["`},
		{"nested agents", "{\"agents\": {\"ci\": {\"agents\": {}}}}", `"agents" is only allowed at the top level`},
		{"duplicate agent", "{\"agents\": {\"ci\": {},\n\"ci\": {}}}", `r.jsonc:2: duplicate key "ci"`},
		{"bad kind", "{\"kinds\": {\n\"X\": \"exec\"}}", `r.jsonc:2: kind of "X": want`},
		{"kinds wrong type", "{\"kinds\": \"shell\"}", `r.jsonc:1: "kinds": want an object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRules("r.jsonc", []byte(tt.src), home)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseRulesJSONCFeatures(t *testing.T) {
	src := `// leading comment
{
  /* a */ "Bash": { "ls *": "allow", }, // trailing comma
  "Read": { "~/.ssh/*": "deny", "$HOME/.aws/*": "deny" },
}`
	spec, err := ParseRules("r.jsonc", []byte(src), home)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Rules) != 3 || spec.Rules[0].Line != 3 {
		t.Fatalf("rules %+v", spec.Rules)
	}
	p, err := gate.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/home/u/.ssh/id_rsa", "/home/u/.aws/credentials"} {
		in, _ := json.Marshal(map[string]string{"file_path": path})
		if ev := p.Evaluate(gate.Call{Tool: "Read", Input: in}, gate.Env{}); ev.Decision != gate.Deny {
			t.Errorf("Read %s: %s", path, ev.Decision)
		}
	}
	// An empty file of rules is valid: everything asks.
	if spec, err := ParseRules("e.jsonc", []byte("{}"), home); err != nil || len(spec.Rules) != 0 {
		t.Errorf("empty: %v %+v", err, spec)
	}
}

func TestLoadRulesMissingFile(t *testing.T) {
	_, err := LoadRules(filepath.Join(t.TempDir(), "nope.jsonc"), home)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}

func FuzzParseRules(f *testing.F) {
	seeds := []string{
		"{}",
		`{"*": "ask"}`,
		`{"Bash": {"git *": "allow", "rm *": "deny"}}`,
		`{"agents": {"ci": {"Bash": "allow"}}, "kinds": {"x": "shell"}}`,
		"// c\n{\"Read\": {\"~/.ssh/*\": \"deny\",},}",
		`{"Bash": {"[": "allow"}}`,
		`{"Bash": {"a\u0000": "deny"}}`,
		`{"{a,b} *": {"{x *,y}": "ask"}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add(DefaultRules())
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := ParseRules("fuzz.jsonc", data, home)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.jsonc") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		p, err := gate.Compile(spec)
		if err != nil {
			t.Fatalf("parsed spec does not compile: %v", err)
		}
		for _, r := range spec.Rules {
			if !r.Action.Valid() || r.Line < 1 || r.Tool == "" || r.Pattern == "" {
				t.Fatalf("bad rule %+v", r)
			}
		}
		// Evaluating with it must not panic either.
		p.Evaluate(gate.Call{Tool: "Read", Input: []byte(`{"file_path":"/a/.env"}`), Cwd: "/a"}, gate.Env{})
		p.Evaluate(gate.Call{Tool: "mcp__x"}, gate.Env{})
	})
}

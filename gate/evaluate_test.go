package gate_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"approvalbot/gate"
)

const (
	testCwd  = "/work/proj"
	testHome = "/home/u"
)

// rule builds one static rule; line numbers follow the order of rules().
type ruleArgs struct {
	tool, pattern string
	action        gate.Action
}

func r(tool, pattern string, a gate.Action) ruleArgs { return ruleArgs{tool, pattern, a} }

func specOf(rules ...ruleArgs) gate.PolicySpec {
	spec := gate.PolicySpec{File: "test.jsonc", Home: testHome}
	for i, ra := range rules {
		spec.Rules = append(spec.Rules, gate.RuleSpec{Tool: ra.tool, Pattern: ra.pattern, Action: ra.action, File: "test.jsonc", Line: i + 1})
	}
	return spec
}

func compile(t testing.TB, spec gate.PolicySpec) *gate.Policy {
	t.Helper()
	p, err := gate.Compile(spec)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return p
}

func input(t testing.TB, kv map[string]any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(kv)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pathCall(tool, key, path string) gate.Call {
	b, _ := json.Marshal(map[string]string{key: path})
	return gate.Call{Agent: "claude", SessionID: "s1", Tool: tool, Input: b, Cwd: testCwd}
}

// secretsPolicy is the classic .env / .env.example file rule set.
func secretsPolicy(t testing.TB) *gate.Policy {
	return compile(t, specOf(
		r("*", "*", gate.Ask),
		r("Read", "*", gate.Allow),
		r("Read", "*.env", gate.Deny),
		r("Read", "*.env.example", gate.Allow),
		r("Read", "~/.ssh/*", gate.Deny),
		r("Read", "id_rsa", gate.Deny),
		r("{Write,Edit}", "*", gate.Ask),
		r("{Write,Edit}", "./*", gate.Allow),
		r("{Write,Edit}", "*.env", gate.Deny),
	))
}

func TestPathTools(t *testing.T) {
	p := secretsPolicy(t)
	tests := []struct {
		name     string
		call     gate.Call
		want     gate.Action
		wantLine int
		outside  bool
	}{
		{"read .env denied", pathCall("Read", "file_path", "/work/proj/.env"), gate.Deny, 3, false},
		{"read relative .env denied", pathCall("Read", "file_path", ".env"), gate.Deny, 3, false},
		{"read .env via ..", pathCall("Read", "file_path", "src/../.env"), gate.Deny, 3, false},
		{"read nested .env", pathCall("Read", "file_path", "/work/proj/svc/prod.env"), gate.Deny, 3, false},
		{"read .env.example allowed", pathCall("Read", "file_path", ".env.example"), gate.Allow, 4, false},
		{"read source allowed", pathCall("Read", "file_path", "main.go"), gate.Allow, 2, false},
		{"read ~/.ssh denied", pathCall("Read", "file_path", "/home/u/.ssh/config"), gate.Deny, 5, true},
		{"read ~ path expanded", pathCall("Read", "file_path", "~/.ssh/config"), gate.Deny, 5, true},
		{"base name rule", pathCall("Read", "file_path", "/backup/keys/id_rsa"), gate.Deny, 6, true},
		{"outside but allowed", pathCall("Read", "file_path", "/etc/hosts"), gate.Allow, 2, true},
		{"write inside allowed", pathCall("Write", "file_path", "src/a.go"), gate.Allow, 8, false},
		{"write outside asks", pathCall("Write", "file_path", "../other/a.go"), gate.Ask, 7, true},
		{"write .env denied", pathCall("Edit", "file_path", "config/.env"), gate.Deny, 9, false},
		{"path key", pathCall("Read", "path", ".env"), gate.Deny, 3, false},
		{"filePath key (opencode)", pathCall("Read", "filePath", ".env"), gate.Deny, 3, false},
		{"absolute_path key (gemini)", pathCall("Read", "absolute_path", "/work/proj/.env"), gate.Deny, 3, false},
		{"notebook_path key", pathCall("Read", "notebook_path", "/work/proj/.env"), gate.Deny, 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := p.Evaluate(tt.call, gate.Env{})
			if ev.Decision != tt.want {
				t.Fatalf("decision %s, want %s (%s)", ev.Decision, tt.want, ev.Reason)
			}
			if len(ev.Commands) != 1 || ev.Commands[0].Rule == nil || ev.Commands[0].Rule.Line != tt.wantLine {
				t.Fatalf("verdicts %+v, want one decided by line %d", ev.Commands, tt.wantLine)
			}
			if ev.OutsideProject != tt.outside {
				t.Errorf("outside %v, want %v (%v)", ev.OutsideProject, tt.outside, ev.OutsidePaths)
			}
		})
	}
}

func TestPathToolFailsClosed(t *testing.T) {
	p := compile(t, specOf(r("*", "*", gate.Allow)))
	tests := []struct {
		name string
		call gate.Call
	}{
		{"no path", gate.Call{Tool: "Read", Input: []byte(`{}`), Cwd: testCwd}},
		{"path of wrong type", gate.Call{Tool: "Read", Input: []byte(`{"file_path": 3}`), Cwd: testCwd}},
		{"not an object", gate.Call{Tool: "Write", Input: []byte(`["x"]`), Cwd: testCwd}},
		{"bad json", gate.Call{Tool: "Write", Input: []byte(`{"file_path":`), Cwd: testCwd}},
		{"relative without cwd", gate.Call{Tool: "Read", Input: []byte(`{"file_path":"a"}`)}},
		{"relative cwd", gate.Call{Tool: "Read", Input: []byte(`{"file_path":"a"}`), Cwd: "proj"}},
		{"nul in path", gate.Call{Tool: "Read", Input: []byte(`{"file_path":"/a\u0000b"}`), Cwd: testCwd}},
		{"another user's home", gate.Call{Tool: "Write", Input: []byte(`{"file_path":"~root/.bashrc"}`), Cwd: testCwd}},
		{"patch without paths", gate.Call{Tool: "apply_patch", Input: []byte(`{"input":"nothing"}`), Cwd: testCwd}},
		{"no tool", gate.Call{Input: []byte(`{}`), Cwd: testCwd}},
		{"name tool with bad input", gate.Call{Tool: "WebFetch", Input: []byte(`nope`)}},
		{"name tool with array input", gate.Call{Tool: "WebFetch", Input: []byte(`[1]`)}},
		{"shell without command", gate.Call{Tool: "Bash", Input: []byte(`{"description":"x"}`), Cwd: testCwd}},
		{"shell with bad workdir", gate.Call{Tool: "Bash", Input: []byte(`{"command":"ls","workdir":1}`), Cwd: testCwd}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := p.Evaluate(tt.call, gate.Env{})
			if ev.Decision != gate.Ask {
				t.Fatalf("decision %s, want ask (%s)", ev.Decision, ev.Reason)
			}
			if ev.Reason == "" || ev.Rule == nil {
				t.Errorf("no reason or rule: %+v", ev)
			}
		})
	}
}

// TestWriteToolAgentCode: a Write of what an agent loads and runs by
// itself (a subagent whose front matter declares hooks, an MCP server
// list) is for a person, even under allow-everything and approve_all.
func TestWriteToolAgentCode(t *testing.T) {
	p := compile(t, specOf(r("*", "*", gate.Allow)))
	for _, path := range []string{
		".claude/agents/a.md", "/home/u/.claude/skills/s/SKILL.md", ".mcp.json", "opencode.jsonc",
		// Copilot CLI: workspace MCP servers, custom agents (front matter
		// may start MCP servers), skills; Codex's and Copilot's .agents.
		".github/mcp.json", ".vscode/mcp.json", ".vscode/settings.json", ".github/agents/a.agent.md", ".github/skills/s/SKILL.md",
		".agents/skills/s/SKILL.md",
		// What Claude Code starts by itself: launch configurations,
		// workflows, routines, scheduled tasks.
		".claude/launch.json", ".claude/workflows/w.md", ".claude/routines/r.md", ".claude/scheduled_tasks.json",
		".qwen/extensions/e/qwen-extension.json",
	} {
		for _, mode := range []gate.Mode{"", gate.ModeApproveAll} {
			ev := p.Evaluate(pathCall("Write", "file_path", path), gate.Env{Mode: mode})
			if ev.Decision != gate.Ask || !ev.Uncertain {
				t.Errorf("Write %s (mode %q): %s uncertain=%v (%s), want an ask only a person answers", path, mode, ev.Decision, ev.Uncertain, ev.Reason)
			}
		}
	}
	for _, path := range []string{".claude/README.md", ".github/copilot-instructions.md", ".github/workflows/ci.yml", ".vscode/extensions.json"} {
		if ev := p.Evaluate(pathCall("Write", "file_path", path), gate.Env{}); ev.Decision != gate.Allow {
			t.Errorf("Write %s: %s (%s), want allow", path, ev.Decision, ev.Reason)
		}
	}
}

func TestSearchToolsDefaultToCwd(t *testing.T) {
	p := compile(t, specOf(r("*", "*", gate.Ask), r("{Grep,Glob}", "./*", gate.Allow)))
	ev := p.Evaluate(gate.Call{Tool: "Grep", Input: []byte(`{"pattern":"TODO"}`), Cwd: testCwd}, gate.Env{})
	if ev.Decision != gate.Allow || ev.Commands[0].Subject != testCwd {
		t.Fatalf("Grep without path: %s %+v", ev.Decision, ev.Commands)
	}
	ev = p.Evaluate(gate.Call{Tool: "Grep", Input: []byte(`{"pattern":"x","path":"/etc"}`), Cwd: testCwd}, gate.Env{})
	if ev.Decision != gate.Ask || !ev.OutsideProject {
		t.Fatalf("Grep /etc: %s outside=%v", ev.Decision, ev.OutsideProject)
	}
}

func TestPatchToolJudgesEveryFile(t *testing.T) {
	spec := specOf(r("*", "*", gate.Ask), r("apply_patch", "./*", gate.Allow), r("apply_patch", "*.env", gate.Deny))
	p := compile(t, spec)
	patch := "*** Begin Patch\n*** Update File: a.go\n*** Add File: .env\n*** End Patch"
	ev := p.Evaluate(gate.Call{Tool: "apply_patch", Input: input(t, map[string]any{"input": patch}), Cwd: testCwd}, gate.Env{})
	if ev.Decision != gate.Deny || len(ev.Commands) != 2 {
		t.Fatalf("patch: %s %+v", ev.Decision, ev.Commands)
	}
	ev = p.Evaluate(gate.Call{Tool: "apply_patch", Input: input(t, map[string]any{"input": "*** Update File: a.go\n"}), Cwd: testCwd}, gate.Env{})
	if ev.Decision != gate.Allow {
		t.Fatalf("patch a.go: %s %s", ev.Decision, ev.Reason)
	}
}

func TestNameTools(t *testing.T) {
	p := compile(t, specOf(
		r("*", "*", gate.Ask),
		r("mcp__github__*", "*", gate.Allow),
		r("mcp__github__delete_*", "*", gate.Deny),
		r("WebFetch", "WebFetch", gate.Allow),
		r("TodoWrite", "other", gate.Deny),
	))
	tests := []struct {
		tool string
		want gate.Action
		line int
	}{
		{"mcp__github__get_issue", gate.Allow, 2},
		{"mcp__github__delete_repo", gate.Deny, 3},
		{"mcp__slack__post", gate.Ask, 1},
		{"WebFetch", gate.Allow, 4},
		// A pattern is matched against the tool name.
		{"TodoWrite", gate.Ask, 1},
	}
	for _, tt := range tests {
		ev := p.Evaluate(gate.Call{Tool: tt.tool, Input: []byte(`{"x":1}`)}, gate.Env{})
		if ev.Decision != tt.want || ev.Rule.Line != tt.line || ev.Kind != gate.KindName {
			t.Errorf("%s: %s by line %d (%s), want %s by %d", tt.tool, ev.Decision, ev.Rule.Line, ev.Kind, tt.want, tt.line)
		}
	}
	// Always for a name tool is `*` for that tool.
	ev := p.Evaluate(gate.Call{Tool: "mcp__slack__post"}, gate.Env{})
	if len(ev.AlwaysRules) != 1 || ev.AlwaysRules[0] != (gate.AlwaysPattern{Tool: "mcp__slack__post", Pattern: "*"}) {
		t.Errorf("always %+v", ev.AlwaysRules)
	}
	// No rule at all: default ask.
	empty := compile(t, gate.PolicySpec{})
	ev = empty.Evaluate(gate.Call{Tool: "X"}, gate.Env{})
	if ev.Decision != gate.Ask || ev.Rule.Layer != gate.LayerDefault {
		t.Errorf("empty policy: %s %+v", ev.Decision, ev.Rule)
	}
}

func TestLastMatchWinsAcrossEntries(t *testing.T) {
	p := compile(t, specOf(
		r("Read", "*", gate.Deny),
		r("*", "*", gate.Allow), // a later, broader entry wins
		r("Write", "*", gate.Ask),
	))
	if ev := p.Evaluate(pathCall("Read", "file_path", "a"), gate.Env{}); ev.Decision != gate.Allow || ev.Rule.Line != 2 {
		t.Errorf("Read: %s line %d", ev.Decision, ev.Rule.Line)
	}
	if ev := p.Evaluate(pathCall("Write", "file_path", "a"), gate.Env{}); ev.Decision != gate.Ask || ev.Rule.Line != 3 {
		t.Errorf("Write: %s line %d", ev.Decision, ev.Rule.Line)
	}
}

func TestLayers(t *testing.T) {
	spec := specOf(
		r("*", "*", gate.Ask),
		r("Read", "*", gate.Allow),
		r("Read", "*.env", gate.Deny),
		r("WebFetch", "*", gate.Allow),
	)
	spec.Agents = map[string][]gate.RuleSpec{
		"ci": {
			{Tool: "Read", Pattern: "*", Action: gate.Ask, File: "test.jsonc", Line: 20},
			{Tool: "Read", Pattern: "*.env", Action: gate.Allow, File: "test.jsonc", Line: 21},
			{Tool: "Deploy", Pattern: "*", Action: gate.Allow, File: "test.jsonc", Line: 22},
			{Tool: "WebFetch", Pattern: "*", Action: gate.Deny, File: "test.jsonc", Line: 23},
		},
	}
	p := compile(t, spec)
	tests := []struct {
		name  string
		call  gate.Call
		want  gate.Action
		layer string
		line  int
	}{
		{"agent ask beats static allow", withAgent(pathCall("Read", "file_path", "a.go"), "ci"), gate.Ask, gate.LayerAgent, 20},
		{"static deny vetoes agent allow", withAgent(pathCall("Read", "file_path", ".env"), "ci"), gate.Deny, gate.LayerStatic, 3},
		{"agent allow beats static default", withAgent(gate.Call{Tool: "Deploy"}, "ci"), gate.Allow, gate.LayerAgent, 22},
		{"agent deny beats static allow", withAgent(gate.Call{Tool: "WebFetch"}, "ci"), gate.Deny, gate.LayerAgent, 23},
		{"other agent: static", withAgent(pathCall("Read", "file_path", "a.go"), "claude"), gate.Allow, gate.LayerStatic, 2},
		{"other agent: deploy asks", withAgent(gate.Call{Tool: "Deploy"}, "claude"), gate.Ask, gate.LayerStatic, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := p.Evaluate(tt.call, gate.Env{})
			if ev.Decision != tt.want || ev.Rule.Layer != tt.layer || ev.Rule.Line != tt.line {
				t.Fatalf("%s by %+v, want %s by %s:%d", ev.Decision, ev.Rule, tt.want, tt.layer, tt.line)
			}
		})
	}
}

func withAgent(c gate.Call, agent string) gate.Call {
	c.Agent = agent
	return c
}

func TestAlwaysLayer(t *testing.T) {
	p := compile(t, specOf(
		r("*", "*", gate.Ask),
		r("Read", "*.env", gate.Deny),
	))
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	past, future := now.Add(-time.Minute), now.Add(time.Hour)
	set, err := gate.CompileAlways([]gate.AlwaysRule{
		{ID: "r1", Agent: "claude", Tool: "Read", Pattern: "/work/proj/*", Scope: gate.ScopeAgent},
		{ID: "r2", Agent: "claude", Tool: "WebFetch", Pattern: "*", Scope: gate.ScopeSession, SessionID: "s1"},
		{ID: "r3", Agent: "claude", Tool: "WebSearch", Pattern: "*", Scope: gate.ScopeAgent, ExpiresAt: &past},
		{ID: "r4", Agent: "claude", Tool: "mcp__*", Pattern: "*", Scope: gate.ScopeAgent, ExpiresAt: &future},
		{ID: "r5", Agent: "other", Tool: "Deploy", Pattern: "*", Scope: gate.ScopeAgent},
		{ID: "r6", Agent: "claude", Tool: "Stop", Pattern: "*", Scope: gate.ScopeSession},
	})
	if err != nil {
		t.Fatal(err)
	}
	env := gate.Env{Always: set, Now: now}
	tests := []struct {
		name    string
		call    gate.Call
		want    gate.Action
		alwaysI string
	}{
		{"always allows an ask", pathCall("Read", "file_path", "a.go"), gate.Allow, "r1"},
		{"always never beats a deny", pathCall("Read", "file_path", ".env"), gate.Deny, ""},
		{"session scope, same session", gate.Call{Agent: "claude", SessionID: "s1", Tool: "WebFetch"}, gate.Allow, "r2"},
		{"session scope, other session", gate.Call{Agent: "claude", SessionID: "s2", Tool: "WebFetch"}, gate.Ask, ""},
		{"expired", gate.Call{Agent: "claude", Tool: "WebSearch"}, gate.Ask, ""},
		{"not yet expired, tool glob", gate.Call{Agent: "claude", Tool: "mcp__x__y"}, gate.Allow, "r4"},
		{"another agent's rule", gate.Call{Agent: "claude", Tool: "Deploy"}, gate.Ask, ""},
		{"session rule without session never applies", gate.Call{Agent: "claude", Tool: "Stop"}, gate.Ask, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := p.Evaluate(tt.call, env)
			if ev.Decision != tt.want {
				t.Fatalf("%s (%s), want %s", ev.Decision, ev.Reason, tt.want)
			}
			if tt.alwaysI != "" && (ev.Rule.Layer != gate.LayerAlways || ev.Rule.ID != tt.alwaysI) {
				t.Fatalf("rule %+v, want always %s", ev.Rule, tt.alwaysI)
			}
		})
	}
	// The Always button's pattern for a path is the exact path, and saving it
	// makes the same call allow.
	call := pathCall("Read", "file_path", "/etc/[x]*")
	ev := p.Evaluate(call, gate.Env{Now: now})
	if ev.Decision != gate.Ask || len(ev.AlwaysRules) != 1 {
		t.Fatalf("ask with always: %+v", ev)
	}
	ap := ev.AlwaysRules[0]
	if ap.Tool != "Read" || ap.Pattern != `/etc/\[x\]\*` || ev.Always[0] != ap.Pattern {
		t.Fatalf("always pattern %+v", ap)
	}
	set2, err := gate.CompileAlways([]gate.AlwaysRule{{ID: "x", Agent: "claude", Tool: ap.Tool, Pattern: ap.Pattern, Scope: gate.ScopeAgent}})
	if err != nil {
		t.Fatal(err)
	}
	if ev := p.Evaluate(call, gate.Env{Always: set2, Now: now}); ev.Decision != gate.Allow {
		t.Fatalf("after always: %s", ev.Decision)
	}
	if ev := p.Evaluate(pathCall("Read", "file_path", "/etc/[x]y"), gate.Env{Always: set2, Now: now}); ev.Decision != gate.Ask {
		t.Fatalf("exact always pattern matched another path")
	}
}

func TestCompileAlwaysErrors(t *testing.T) {
	for _, bad := range []gate.AlwaysRule{
		{ID: "a", Tool: "Bash", Pattern: "git [", Scope: gate.ScopeAgent},
		{ID: "b", Tool: "", Pattern: "*", Scope: gate.ScopeAgent},
		{ID: "c", Tool: "Bash", Pattern: "", Scope: gate.ScopeAgent},
		{ID: "d", Tool: "Bash", Pattern: "*", Scope: "forever"},
	} {
		if _, err := gate.CompileAlways([]gate.AlwaysRule{bad}); err == nil || !strings.Contains(err.Error(), bad.ID) {
			t.Errorf("CompileAlways(%+v) error = %v, want one naming it", bad, err)
		}
	}
	if s, err := gate.CompileAlways(nil); err != nil || s.Len() != 0 {
		t.Errorf("empty set: %v", err)
	}
}

func TestEvaluateModes(t *testing.T) {
	p := compile(t, specOf(r("*", "*", gate.Ask), r("Ok", "*", gate.Allow), r("Bad", "*", gate.Deny)))
	tests := []struct {
		mode gate.Mode
		tool string
		want gate.Action
	}{
		{"", "X", gate.Ask},
		{gate.ModeInteractive, "X", gate.Ask},
		{gate.ModeStrict, "X", gate.Deny},
		{gate.ModeApproveAll, "X", gate.Allow},
		{gate.ModeApproveAll, "Bad", gate.Deny},
		{gate.ModeStrict, "Ok", gate.Allow},
		{"bogus", "X", gate.Ask},
	}
	for _, tt := range tests {
		ev := p.Evaluate(gate.Call{Tool: tt.tool}, gate.Env{Mode: tt.mode})
		if ev.Decision != tt.want {
			t.Errorf("mode %q tool %s: %s, want %s", tt.mode, tt.tool, ev.Decision, tt.want)
		}
		if tt.mode == gate.ModeStrict && tt.tool == "X" {
			if ev.Rule.Layer != gate.LayerMode || !strings.Contains(ev.Reason, "strict mode") || len(ev.Always) != 0 {
				t.Errorf("strict: %+v", ev)
			}
		}
	}
}

func TestSelfProtectionFileTools(t *testing.T) {
	spec := specOf(r("*", "*", gate.Allow))
	spec.Protected = []string{"/home/u/.config/approvalbot/rules.jsonc", "~/.local/share/approvalbot"}
	p := compile(t, spec)
	tests := []struct {
		call gate.Call
		want gate.Action
	}{
		{pathCall("Write", "file_path", "/home/u/.config/approvalbot/rules.jsonc"), gate.Deny},
		{pathCall("Edit", "file_path", "../../home/u/.config/approvalbot/./rules.jsonc"), gate.Deny},
		{pathCall("write_file", "path", "/home/u/.local/share/approvalbot/approvalbot.db"), gate.Deny},
		{pathCall("Write", "file_path", "/home/u/.local/share/approvalbot"), gate.Deny},
		{pathCall("Write", "file_path", "/home/u/.local/share/approvalbotx"), gate.Allow},
		// Reading is not writing.
		{pathCall("Read", "file_path", "/home/u/.config/approvalbot/rules.jsonc"), gate.Allow},
	}
	for _, tt := range tests {
		for _, mode := range []gate.Mode{"", gate.ModeApproveAll} {
			ev := p.Evaluate(tt.call, gate.Env{Mode: mode})
			if ev.Decision != tt.want {
				t.Errorf("%s %s (mode %q): %s, want %s (%s)", tt.call.Tool, tt.call.Input, mode, ev.Decision, tt.want, ev.Reason)
			}
			if tt.want == gate.Deny && ev.Rule.Layer != gate.LayerBuiltin {
				t.Errorf("deny not builtin: %+v", ev.Rule)
			}
		}
	}
}

func TestToolKinds(t *testing.T) {
	spec := specOf()
	spec.ToolKinds = map[string]gate.ToolKind{"mcp__fs__write": gate.KindWrite, "Read": gate.KindName}
	p := compile(t, spec)
	tests := map[string]gate.ToolKind{
		// Claude Code
		"Bash": gate.KindShell, "Read": gate.KindName, "Write": gate.KindWrite, "Edit": gate.KindWrite,
		"MultiEdit": gate.KindWrite, "NotebookEdit": gate.KindWrite, "Glob": gate.KindRead, "Grep": gate.KindRead,
		"LS": gate.KindRead, "WebFetch": gate.KindName,
		// Codex
		"shell": gate.KindShell, "local_shell": gate.KindShell, "exec_command": gate.KindShell,
		"apply_patch": gate.KindWrite,
		// opencode
		"bash": gate.KindShell, "read": gate.KindRead, "write": gate.KindWrite, "edit": gate.KindWrite,
		"patch": gate.KindWrite, "list": gate.KindRead, "glob": gate.KindRead,
		// Gemini CLI
		"run_shell_command": gate.KindShell, "read_file": gate.KindRead, "write_file": gate.KindWrite,
		"replace": gate.KindWrite, "list_directory": gate.KindRead,
		// configured
		"mcp__fs__write": gate.KindWrite, "mcp__other": gate.KindName,
	}
	for tool, want := range tests {
		if got := p.Kind(tool); got != want {
			t.Errorf("Kind(%s) = %s, want %s", tool, got, want)
		}
	}
}

func TestEvaluateIsConcurrencySafe(t *testing.T) {
	p := secretsPolicy(t)
	done := make(chan gate.Action, 8)
	for i := 0; i < 8; i++ {
		go func() {
			var last gate.Action
			for j := 0; j < 200; j++ {
				last = p.Evaluate(pathCall("Read", "file_path", ".env"), gate.Env{}).Decision
			}
			done <- last
		}()
	}
	for i := 0; i < 8; i++ {
		if got := <-done; got != gate.Deny {
			t.Fatalf("got %s", got)
		}
	}
}

package gate

import (
	"strings"
	"testing"
)

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		pattern string
		s       string
		want    bool
	}{
		// A trailing " *" also matches nothing, but only at a word boundary.
		{"git log *", "git log", true},
		{"git log *", "git log -p -1", true},
		{"git log *", "git logout", false},
		{"git log*", "git logout", true},
		{"git log", "git log -p", false},
		{"git log", "git log", true},
		// `*` crosses separators and spaces: no separators.
		{"cat *", "cat /etc/passwd", true},
		{"*.env", "/work/proj/.env", true},
		{"/work/*", "/work/a/b/c", true},
		{"rm * /", "rm -rf /", true},
		{"rm * /", "rm -rf /tmp", false},
		// Globs: alternatives and classes, escapes.
		{"{Read,Write}", "Write", true},
		{"rm -*[rR]* *", "rm -fr x", true},
		{`npm run build:\{a,b\}`, "npm run build:{a,b}", true},
		{`a\ *`, "a", false},
		{`a\ *`, "a x", true},
		// The bare prefix of a trailing " *" must compile on its own.
		{"{a *,b}", "a", false},
		{"{a *,b}", "a x", true},
		// A literal pattern is compared exactly.
		{"pwd", "pwd", true},
		{"pwd", "pwdx", false},
		// The run-time placeholder NUL is matched only by wildcards.
		{"curl *", "curl \x00", true},
		{"curl https://ok/*", "curl \x00", false},
	}
	for _, tt := range tests {
		m, err := compilePattern(tt.pattern, "/home/u")
		if err != nil {
			t.Fatalf("compile %q: %v", tt.pattern, err)
		}
		if got := m.match(tt.s); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestHomeExpansion(t *testing.T) {
	tests := []struct {
		pattern, home, want string
	}{
		{"~/.ssh/*", "/home/u", "/home/u/.ssh/*"},
		{"$HOME/.aws/*", "/home/u", "/home/u/.aws/*"},
		{"${HOME}/x", "/home/u", "/home/u/x"},
		{"~", "/home/u", "/home/u"},
		{"rm -rf ~", "/home/u", "rm -rf /home/u"},
		{"rm -rf ~/ *", "/home/u", "rm -rf /home/u/ *"},
		// Not at a word start or not ending a word: unchanged.
		{"a~/b", "/home/u", "a~/b"},
		{"~user/x", "/home/u", "~user/x"},
		{"$HOMEDIR/x", "/home/u", "$HOMEDIR/x"},
		// Home's glob syntax is quoted.
		{"~/x", "/home/[u]", `/home/\[u\]/x`},
	}
	for _, tt := range tests {
		got, ok := expandHomePattern(tt.pattern, tt.home)
		if !ok || got != tt.want {
			t.Errorf("expandHomePattern(%q, %q) = %q, %v; want %q", tt.pattern, tt.home, got, ok, tt.want)
		}
	}
	if _, ok := expandHomePattern("~/.ssh/*", ""); ok {
		t.Errorf("~ without a home must fail")
	}
	m, err := compilePattern("~/x", "/home/[u]")
	if err != nil || !m.match("/home/[u]/x") {
		t.Errorf("quoted home does not match itself: %v", err)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name string
		spec PolicySpec
		want string
	}{
		{"bad glob", PolicySpec{File: "r.jsonc", Rules: []RuleSpec{{Tool: "Bash", Pattern: "git [", Action: Allow, File: "r.jsonc", Line: 7}}},
			`r.jsonc:7: Bash: bad pattern "git ["`},
		{"bad tool glob", PolicySpec{Rules: []RuleSpec{{Tool: "mcp__{x", Pattern: "*", Action: Allow, File: "r.jsonc", Line: 3}}},
			`r.jsonc:3: bad tool name glob "mcp__{x"`},
		{"bad action", PolicySpec{Rules: []RuleSpec{{Tool: "Bash", Pattern: "*", Action: "yes", File: "r.jsonc", Line: 2}}},
			`r.jsonc:2: Bash: pattern "*": unknown action "yes"`},
		{"empty pattern", PolicySpec{Rules: []RuleSpec{{Tool: "Bash", Pattern: "", Action: Allow, File: "r.jsonc", Line: 4}}},
			`r.jsonc:4: Bash: bad pattern ""`},
		{"agent rule", PolicySpec{Agents: map[string][]RuleSpec{"ci": {{Tool: "Bash", Pattern: "[", Action: Allow, File: "r.jsonc", Line: 9}}}},
			`r.jsonc:9: agent "ci": Bash: bad pattern "["`},
		{"home unknown", PolicySpec{Rules: []RuleSpec{{Tool: "Read", Pattern: "~/.ssh/*", Action: Deny, File: "r.jsonc", Line: 5}}},
			`r.jsonc:5: Read: bad pattern "~/.ssh/*": pattern starts with ~`},
		{"relative home", PolicySpec{Home: "home/u"}, `home directory "home/u" is not absolute`},
		{"bad kind", PolicySpec{ToolKinds: map[string]ToolKind{"X": "exec"}}, `tool "X": unknown kind "exec"`},
		{"relative protected", PolicySpec{Protected: []string{"rules.jsonc"}}, `protected path "rules.jsonc" is not absolute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Compile error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestResolvePath(t *testing.T) {
	tests := []struct {
		path, cwd string
		abs, rel  string
		inside    bool
		ok        bool
	}{
		{".env", "/work/proj", "/work/proj/.env", "./.env", true, true},
		{"src/../.env", "/work/proj", "/work/proj/.env", "./.env", true, true},
		{"../other/x", "/work/proj", "/work/other/x", "", false, true},
		{"/work/projx/a", "/work/proj", "/work/projx/a", "", false, true},
		{"/work/proj", "/work/proj", "/work/proj", "./", true, true},
		{"~/.ssh/id_rsa", "/work/proj", "/home/u/.ssh/id_rsa", "", false, true},
		{"/etc//passwd", "", "/etc/passwd", "", false, true},
		{"x", "", "", "", false, false},
		{"a\x00b", "/work/proj", "", "", false, false},
		{"/a", "/", "/a", "./a", true, true},
	}
	for _, tt := range tests {
		ps, ok := resolvePath(tt.path, tt.cwd, "/home/u")
		if ok != tt.ok || ps.abs != tt.abs || ps.rel != tt.rel || ps.inside != tt.inside {
			t.Errorf("resolvePath(%q, %q) = %+v, %v; want abs %q rel %q inside %v ok %v",
				tt.path, tt.cwd, ps, ok, tt.abs, tt.rel, tt.inside, tt.ok)
		}
	}
}

func TestShellCommandFromInput(t *testing.T) {
	tests := []struct {
		input string
		want  string
		ok    bool
	}{
		{`{"command":"git status"}`, "git status", true},
		{`{"cmd":"ls -la"}`, "ls -la", true},
		{`{"command":["bash","-lc","git status && ls"]}`, "git status && ls", true},
		{`{"command":["/bin/zsh","-c","echo hi"]}`, "echo hi", true},
		// sh (dash) and a bash of the project's own are the programs named.
		{`{"command":["/bin/sh","-c","echo hi"]}`, "/bin/sh -c 'echo hi'", true},
		{`{"command":["./bash","-lc","git status"]}`, "./bash -lc 'git status'", true},
		// Codex's exec_command with the shell the model names.
		{`{"cmd":"echo hi","shell":"/bin/sh"}`, "/bin/sh -c 'echo hi'", true},
		{`{"cmd":"echo hi","shell":"/bin/bash"}`, "echo hi", true},
		{`{"cmd":"echo hi","shell":7}`, "", false},
		{`{"command":["git","commit","-m","a b; rm -rf /"]}`, `git commit -m 'a b; rm -rf /'`, true},
		{`{"command":["echo","it's"]}`, `echo 'it'\''s'`, true},
		{`{"command":["bash","--rcfile","x"]}`, "bash --rcfile x", true},
		{`{"command":""}`, "", false},
		{`{"command":[]}`, "", false},
		{`{"command":42}`, "", false},
		{`{"command":[1,2]}`, "", false},
		{`{}`, "", false},
	}
	for _, tt := range tests {
		in, ok := decodeInput([]byte(tt.input))
		if !ok {
			t.Fatalf("decode %s", tt.input)
		}
		got, ok := shellCommand(in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("shellCommand(%s) = %q, %v; want %q, %v", tt.input, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPatchPaths(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: src/a.go\n@@\n-x\n+y\n*** Add File: .env\n+K=V\n*** Move to: b.go\n*** End Patch\n"
	got, ok := patchPaths(patch)
	want := []string{"src/a.go", ".env", "b.go"}
	if !ok || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("patchPaths = %q, %v, want %q", got, ok, want)
	}
	diff := "--- a/x.go\t2024\n+++ b/x.go\n@@ -1 +1 @@\n--- /dev/null\n+++ b/new.txt\n"
	got, ok = patchPaths(diff)
	want = []string{"x.go", "new.txt"}
	if !ok || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("patchPaths(diff) = %q, %v, want %q", got, ok, want)
	}
	// opencode reads headers without the space after the colon, and trims
	// paths as JavaScript does (a byte-order mark too) (round 16).
	lenient := "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Add File:.opencode/plugin/evil.js\n+y\n" +
		"*** Update File:\u00a0a.go\n@@\n *** a Markdown rule\n*** Add File: \ufeff.claude/settings.json\n+z\n*** Move to:b.go\n*** End Patch\n"
	got, ok = patchPaths(lenient)
	want = []string{"ok.txt", ".opencode/plugin/evil.js", "a.go", ".claude/settings.json", "b.go"}
	if !ok || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("patchPaths(lenient) = %q, %v, want %q", got, ok, want)
	}
	if got, ok := patchPaths("*** Begin Patch\n*** Create File: x\n*** End Patch\n"); ok {
		t.Errorf("an unknown header: %q, %v, want not understood", got, ok)
	}
}

func FuzzPatchPaths(f *testing.F) {
	f.Add("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n")
	f.Add("*** Update File:\ufeff.claude/settings.json\n*** Move to:b\n")
	f.Add("--- a/x\n+++ b/y\n")
	f.Fuzz(func(t *testing.T, text string) {
		paths, ok := patchPaths(text)
		if !ok && paths != nil {
			t.Fatalf("not understood, with paths %q", paths)
		}
		for _, p := range paths {
			if p == "" || jsTrim(p) != p {
				t.Fatalf("path %q is empty or untrimmed", p)
			}
		}
	})
}

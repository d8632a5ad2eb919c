package gate_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"approvalbot/config"
	"approvalbot/gate"
)

// everydayAllowedFloor is the least share of testdata/everyday.txt the
// default rules must allow: security must not be bought by asking about
// everything. Measured on aed457a (before "understood, or ask"): 170 of 588
// lines, 28.9%; after it, with the default rules widened to the read-only
// idioms the analysis now understands: 216 of 588, 36.7%. The floor is that
// minus about two points.
const everydayAllowedFloor = 0.345

// everydayTree makes a small project on disk, as an agent would find it
// (sources, docs, a .env with a secret, a .git directory), since the gate
// judges a pattern read (`cat *.go`, `grep -r x .`) by the files it names.
func everydayTree(t *testing.T) (home, cwd string) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "home", "dev")
	cwd = filepath.Join(home, "proj")
	for _, f := range []string{"main.go", "main_test.go", "go.mod", "go.sum", "README.md", "Makefile", "package.json",
		".env", ".env.example", ".gitignore", "gate/evaluate.go", "gate/gate.go", "gate/gate_test.go",
		"src/index.ts", "src/app.ts", "docs/notes.md", "cmd/app/main.go"} {
		p := filepath.Join(cwd, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("TODO\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A real repository, as projects are: everything tracked but .env
	// (git grep and git diff read tracked files only).
	if err := os.WriteFile(filepath.Join(cwd, ".gitignore"), []byte(".env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gate.GitRun(t, cwd, "init", "-q")
	gate.GitRun(t, cwd, "add", ".")
	return home, cwd
}

const (
	// everydayRisky ends a line a person must confirm; bash reads it as a
	// comment.
	everydayRisky = "  #risky"
)

type everydayLine struct {
	lineNo int
	cmd    string
	risky  bool
}

// loadEveryday reads testdata/everyday.txt (its header describes the format).
func loadEveryday(t *testing.T) []everydayLine {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "everyday.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out   []everydayLine
		block *everydayLine
		parts []string
		n     int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		if block != nil {
			if line == "#end" {
				block.cmd = strings.Join(parts, "\n")
				out = append(out, *block)
				block, parts = nil, nil
				continue
			}
			parts = append(parts, line)
			continue
		}
		switch trimmed := strings.TrimSpace(line); {
		case trimmed == "#begin" || trimmed == "#begin #risky":
			block = &everydayLine{lineNo: n, risky: strings.HasSuffix(trimmed, "#risky")}
			continue
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			continue
		}
		l := everydayLine{lineNo: n, cmd: line}
		if strings.HasSuffix(line, everydayRisky) {
			l.cmd, l.risky = strings.TrimSuffix(line, everydayRisky), true
			checkRiskyMarkerIsComment(t, n, line, len(l.cmd))
		}
		if strings.Contains(l.cmd, "#risky") {
			t.Errorf("everyday.txt:%d: misplaced risky marker (want exactly %q at the end): %s", n, everydayRisky, line)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if block != nil {
		t.Fatalf("everyday.txt:%d: #begin without #end", block.lineNo)
	}
	return out
}

// checkRiskyMarkerIsComment checks that bash reads the marker as a comment,
// so stripping it does not change what the line runs: the bash parser must
// find a comment "risky" exactly where the marker's "#" is.
func checkRiskyMarkerIsComment(t *testing.T, n int, line string, at int) {
	t.Helper()
	file, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).
		Parse(strings.NewReader(line), "")
	if err != nil {
		t.Errorf("everyday.txt:%d: does not parse as bash: %v", n, err)
		return
	}
	want := uint(at + len(everydayRisky) - len("#risky"))
	found := false
	syntax.Walk(file, func(node syntax.Node) bool {
		if c, ok := node.(*syntax.Comment); ok && c.Text == "risky" && c.Hash.Offset() == want {
			found = true
		}
		return true
	})
	for _, c := range file.Last {
		if c.Text == "risky" && c.Hash.Offset() == want {
			found = true
		}
	}
	if !found {
		t.Errorf("everyday.txt:%d: bash does not read the risky marker as a comment: %s", n, line)
	}
}

// everydayPolicy compiles the embedded default rules the way `approvalbot
// check` does without --rules (cmd/approvalbot/check.go, checkPolicy): the
// defaults, parsed with the home dir, plus the protected paths serve adds
// (cmd/approvalbot/serve.go, protectedPaths, for the default data dir).
func everydayPolicy(t *testing.T, everydayHome string) *gate.Policy {
	t.Helper()
	spec, err := config.ParseRules(config.DefaultRulesName, config.DefaultRules(), everydayHome)
	if err != nil {
		t.Fatal(err)
	}
	spec.Protected = append(spec.Protected,
		filepath.Join(everydayHome, ".local", "share", "approvalbot"),
		filepath.Join(everydayHome, ".config", "approvalbot"),
		filepath.Join(everydayHome, ".claude", "settings.json"),
		filepath.Join(everydayHome, ".claude", "settings.local.json"),
		filepath.Join(everydayHome, ".codex"),
	)
	spec.Secrets = append(spec.Secrets, filepath.Join(everydayHome, ".local", "share", "approvalbot"))
	spec.Home = everydayHome
	p, err := gate.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// everydayToolList is a rule reference's abbreviated tool-name glob, as in
// "({Bash,bash,shell,Shell,shell...}: *)"; the groups drop it.
var everydayToolList = regexp.MustCompile(`\(\{[^}]*\}: `)

// everydaySubcommand lists programs whose sub-command matters to the rules.
var everydaySubcommand = map[string]bool{
	"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "cargo": true,
	"docker": true, "gh": true, "make": true, "npx": true, "kubectl": true, "pip": true,
}

// everydayAskGroup names why one part of an asked call asks, coarsely enough
// that the same idiom on different lines falls in one group: the shell
// analysis' reason as is, or, for an ask from the rules, the rule and the
// program (with its leading options and sub-command for git, go, npm, ...:
// `git -P diff`, `git -C DIR status`).
func everydayAskGroup(v gate.Verdict) string {
	layer := ""
	if v.Rule != nil {
		layer = v.Rule.Layer
	}
	reason := everydayToolList.ReplaceAllString(v.Reason, "(")
	switch {
	case layer == gate.LayerShell:
		return "analysis: " + reason
	case v.Kind == "command":
		f := strings.Fields(v.Subject)
		if len(f) == 0 {
			return "rules: " + reason + ": (empty)"
		}
		name := f[0]
		if everydaySubcommand[name] {
			for i := 1; i < len(f); i++ {
				w := f[i]
				if (f[0] == "git" && w == "-C") || (f[0] == "make" && w == "-C") {
					name += " " + w + " DIR"
					i++
					continue
				}
				name += " " + w
				if !strings.HasPrefix(w, "-") {
					break
				}
			}
		}
		return "rules: " + reason + ": " + name
	default:
		return "rules (" + v.Kind + "): " + reason
	}
}

// everydayReasonClass is the coarse class of an ask: which layer, and for
// the analysis its reason up to the first parenthesis.
func everydayReasonClass(v gate.Verdict) string {
	if v.Rule != nil && v.Rule.Layer == gate.LayerShell {
		r, _, _ := strings.Cut(v.Reason, " (")
		return "analysis: " + r
	}
	return "rules (" + v.Kind + "): " + everydayToolList.ReplaceAllString(v.Reason, "(")
}

func TestEverydayShare(t *testing.T) {
	lines := loadEveryday(t)
	if len(lines) < 320 {
		t.Fatalf("everyday.txt has %d command lines, want at least 320", len(lines))
	}
	everydayHome, everydayCwd := everydayTree(t)
	p := everydayPolicy(t, everydayHome)

	counts := map[gate.Action]int{}
	groups := map[string]int{}  // lines per everydayAskGroup
	classes := map[string]int{} // lines per everydayReasonClass
	var allowed, asked, denied []string
	risky := 0
	for _, l := range lines {
		input, err := json.Marshal(map[string]string{"command": l.cmd})
		if err != nil {
			t.Fatal(err)
		}
		ev := p.Evaluate(gate.Call{
			Agent:     "claude-code",
			SessionID: "everyday",
			Tool:      "Bash",
			Input:     input,
			Cwd:       everydayCwd,
		}, gate.Env{})
		counts[ev.Decision]++
		if l.risky {
			risky++
			if ev.Decision == gate.Allow {
				t.Errorf("everyday.txt:%d: risky line allowed: %s\n\t%s", l.lineNo, l.cmd, ev.Reason)
			}
		}
		switch ev.Decision {
		case gate.Allow:
			allowed = append(allowed, fmt.Sprintf("%4d %s", l.lineNo, l.cmd))
		case gate.Ask:
			asked = append(asked, fmt.Sprintf("%4d %s\n\t\t%s", l.lineNo, l.cmd, ev.Reason))
			seen, seenClass := map[string]bool{}, map[string]bool{}
			for _, v := range ev.Commands {
				if v.Decision == gate.Ask {
					seen[everydayAskGroup(v)] = true
					seenClass[everydayReasonClass(v)] = true
				}
			}
			if len(seen) == 0 { // the whole line asks (parse error, unsafe text, ...)
				seen["whole line: "+ev.Reason] = true
				seenClass["whole line: "+ev.Reason] = true
			}
			for g := range seen {
				groups[g]++
			}
			for c := range seenClass {
				classes[c]++
			}
		case gate.Deny:
			denied = append(denied, fmt.Sprintf("%4d %s\n\t\t%s", l.lineNo, l.cmd, ev.Reason))
		}
	}

	total := len(lines)
	share := func(a gate.Action) string {
		return fmt.Sprintf("%d (%.1f%%)", counts[a], 100*float64(counts[a])/float64(total))
	}
	t.Logf("everyday lines: %d (%d marked risky): allowed %s, asked %s, denied %s",
		total, risky, share(gate.Allow), share(gate.Ask), share(gate.Deny))
	if testing.Verbose() {
		t.Logf("allowed lines:\n%s", strings.Join(allowed, "\n"))
		t.Logf("asked lines:\n%s", strings.Join(asked, "\n"))
		t.Logf("denied lines:\n%s", strings.Join(denied, "\n"))
		t.Logf("why asked, by class (lines per class; a line may count under several):\n%s", everydayTable(classes))
		t.Logf("why asked, by reason and program (lines per group):\n%s", everydayTable(groups))
	}

	if got := float64(counts[gate.Allow]) / float64(total); got < everydayAllowedFloor {
		t.Errorf("allowed share %.1f%% fell below the floor %.1f%%", 100*got, 100*everydayAllowedFloor)
	}
}

// everydayTable lists counts, most first.
func everydayTable(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%4d  %s\n", m[k], k)
	}
	return b.String()
}

package shell

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gobwas/glob"
)

// corpusCase is one line of testdata/shell_cases.jsonl.
type corpusCase struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Command   string `json:"command"`
	Rules     string `json:"rules"`
	Expected  string `json:"expected"`
	Generated string `json:"generated_pattern"`
}

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	f, err := os.Open("testdata/shell_cases.jsonl")
	if err != nil {
		t.Fatalf("open corpus: %v", err)
	}
	defer f.Close()
	var cases []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("corpus line %q: %v", sc.Text(), err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read corpus: %v", err)
	}
	return cases
}

// testRule is a compiled rule of the corpus notation.
type testRule struct {
	action string
	g      *glob.Pattern
	bare   *glob.Pattern // the pattern without its trailing " *", which also matches
}

var ruleRE = regexp.MustCompile(`([ADK])\(((?:[^()]|\([^()]*\))*)\)`)

func compileRules(t *testing.T, s string) []testRule {
	t.Helper()
	var rules []testRule
	for _, m := range ruleRE.FindAllStringSubmatch(s, -1) {
		r := testRule{action: map[string]string{"A": "allow", "D": "deny", "K": "ask"}[m[1]]}
		r.g = glob.MustCompile(m[2])
		if p, ok := strings.CutSuffix(m[2], " *"); ok {
			r.bare = glob.MustCompile(p)
		}
		rules = append(rules, r)
	}
	return rules
}

func matchRules(rules []testRule, text string) string {
	act := ""
	for _, r := range rules {
		if r.g.Match(text) || r.bare != nil && r.bare.Match(text) {
			act = r.action
		}
	}
	return act
}

// decide mirrors the gate's documented semantics closely enough to check
// the shell side of the corpus: any deny denies, else any ask asks.
func decide(rules []testRule, an *Analysis) string {
	deny, ask := false, an.Unsafe != "" || len(an.Commands) == 0 && len(an.Writes) == 0
	for _, c := range an.Commands {
		act := matchRules(rules, c.Text)
		if c.Canon != "" && act != "deny" {
			if ca := matchRules(rules, c.Canon); ca == "deny" || ca == "allow" && act != "allow" {
				act = ca
			}
		}
		for _, alt := range c.AltTexts {
			if matchRules(rules, alt) == "deny" {
				act = "deny"
			}
		}
		switch {
		case act == "deny":
			deny = true
		case act != "allow", c.Dynamic != "", c.Hazard != "":
			ask = true
		}
	}
	if len(an.Writes) > 0 || len(an.Network) > 0 {
		ask = true // the corpus has no write-tool rules: every write asks, and so does a socket
	}
	for _, r := range an.Reads {
		if r.Dynamic {
			ask = true
		}
	}
	switch {
	case deny:
		return "deny"
	case ask:
		return "ask"
	}
	return "allow"
}

func TestCorpusDecisions(t *testing.T) {
	for _, c := range loadCorpus(t) {
		if c.Kind != "decision" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) {
			an := Analyze(c.Command, Options{Cwd: "/work/project", Home: "/home/user"})
			got := decide(compileRules(t, c.Rules), an)
			want := strings.Fields(c.Expected)[0]
			okAlso := ""
			if i := strings.Index(c.Expected, "("); i >= 0 {
				okAlso = strings.Fields(c.Expected[i+1:])[0]
			}
			if got == "allow" && want != "allow" {
				t.Fatalf("BYPASS: %q allowed, want %s\n%s", c.Command, c.Expected, dump(an))
			}
			if got != want && got != okAlso {
				t.Errorf("%q: got %s, want %s\n%s", c.Command, got, c.Expected, dump(an))
			}
		})
	}
}

func TestCorpusAlwaysPatterns(t *testing.T) {
	// want is the pattern each command's Always must equal, in order; ""
	// where none may be offered. A wrapper gets only its exact text. It follows the corpus notes; O18 differs in
	// form only: Text quotes `build:{a,b}` (braces are not bare), so the
	// pattern quotes it too, with the braces escaped by glob.QuoteMeta.
	want := map[string][]string{
		"O03": {"npm run build"},
		"O04": {"git log *"},
		"O06": {`git -C /repo push origin main`},
		"O07": {"sudo apt-get install jq", `apt-get install *`},
		"O08": {"npm test *"}, // timeout is transparent: the inner pattern is enough
		"O09": {"bash -c 'npm test'", "npm test *"},
		"O12": {""},
		"O15": {"find *"},
		"O16": {"sed -n *"},
		"O18": {`npm run build:\{a,b\}`},
	}
	seen := 0
	for _, c := range loadCorpus(t) {
		if c.Kind != "always_allow_generation" {
			continue
		}
		seen++
		t.Run(c.ID, func(t *testing.T) {
			w, ok := want[c.ID]
			if !ok {
				t.Fatalf("no expectation for %s (%q, corpus says %q)", c.ID, c.Command, c.Generated)
			}
			an := Analyze(c.Command, Options{Cwd: "/work/project"})
			var got []string
			for _, cmd := range an.Commands {
				got = append(got, cmd.Always)
				if cmd.Always == "" {
					continue
				}
				g := glob.MustCompile(cmd.Always)
				bare := cmd.Always
				if p, ok := strings.CutSuffix(bare, " *"); ok {
					bare = p
				}
				if !g.Match(cmd.Text) && !glob.MustCompile(bare).Match(cmd.Text) {
					t.Errorf("pattern %q does not match its own command %q", cmd.Always, cmd.Text)
				}
				if cmd.Always != exactPattern(cmd.Argv) && (strings.HasPrefix(cmd.Always, "sudo") || strings.HasPrefix(cmd.Always, "timeout") || strings.HasPrefix(cmd.Always, "bash")) {
					t.Errorf("wildcard pattern %q for a wrapper", cmd.Always)
				}
			}
			if strings.Join(got, "|") != strings.Join(w, "|") {
				t.Errorf("%q: Always = %q, want %q (corpus: %s)", c.Command, got, w, c.Generated)
			}
		})
	}
	if seen != len(want) {
		t.Errorf("corpus has %d always cases, test expects %d", seen, len(want))
	}
}

func dump(an *Analysis) string {
	b, _ := json.MarshalIndent(an, "", "  ")
	return string(b)
}

package gate_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"approvalbot/gate"
)

// corpusCase is one line of ../shell/testdata/shell_cases.jsonl.
type corpusCase struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Command   string `json:"command"`
	Rules     string `json:"rules"`
	Expected  string `json:"expected"`
	Generated string `json:"generated_pattern"`
	Why       string `json:"why"`
}

// corpusStricter lists the cases whose answer is stricter than expected,
// each with the reason. Keep it empty or tiny.
var corpusStricter = map[string]string{
	"G32": "the env -S payload inside find -exec is now analyzed: `rm -rf /` would remove approvalbot's own files (built-in deny)",
}

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	f, err := os.Open("../shell/testdata/shell_cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("corpus line %q: %v", sc.Text(), err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// corpusRules translates `A(glob) D(glob) K(glob)` into one Bash entry in
// that order; "(none)" is no rules.
func corpusRules(t *testing.T, notation string) gate.PolicySpec {
	t.Helper()
	spec := gate.PolicySpec{File: "corpus", Home: "/home/u"}
	s := strings.TrimSpace(notation)
	if s == "(none)" || s == "" {
		return spec
	}
	for len(s) > 0 {
		if len(s) < 3 || s[1] != '(' {
			t.Fatalf("bad rules notation %q at %q", notation, s)
		}
		var action gate.Action
		switch s[0] {
		case 'A':
			action = gate.Allow
		case 'D':
			action = gate.Deny
		case 'K':
			action = gate.Ask
		default:
			t.Fatalf("bad action in %q", notation)
		}
		// The glob ends at the ")" followed by the end or by " X(".
		end := -1
		for i := 2; i < len(s); i++ {
			if s[i] != ')' {
				continue
			}
			rest := s[i+1:]
			if rest == "" || len(rest) >= 3 && rest[0] == ' ' && strings.ContainsRune("ADK", rune(rest[1])) && rest[2] == '(' {
				end = i
				break
			}
		}
		if end < 0 {
			t.Fatalf("unterminated rule in %q", notation)
		}
		spec.Rules = append(spec.Rules, gate.RuleSpec{Tool: "Bash", Pattern: s[2:end], Action: action, File: "corpus", Line: len(spec.Rules) + 1})
		s = strings.TrimSpace(s[end+1:])
	}
	return spec
}

// corpusAccepts returns the exact expected action and the looser or
// stricter one the case also accepts.
func corpusAccepts(expected string) (exact gate.Action, alt gate.Action) {
	word, rest, _ := strings.Cut(expected, " ")
	exact = gate.Action(word)
	if strings.Contains(rest, "ask ok") {
		alt = gate.Ask
	}
	if strings.Contains(rest, "deny ok") {
		alt = gate.Deny
	}
	return exact, alt
}

func shellCall(cmd string) gate.Call {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return gate.Call{Agent: "claude", SessionID: "s", Tool: "Bash", Input: in, Cwd: "/work/proj"}
}

func TestCorpusDecisions(t *testing.T) {
	var exact, accepted, stricter, total int
	seen := map[string]bool{}
	for _, c := range loadCorpus(t) {
		if c.Kind != "decision" {
			continue
		}
		total++
		seen[c.ID] = true
		t.Run(c.ID, func(t *testing.T) {
			p := compile(t, corpusRules(t, c.Rules))
			ev := p.Evaluate(shellCall(c.Command), gate.Env{})
			want, alt := corpusAccepts(c.Expected)
			if !want.Valid() {
				t.Fatalf("bad expectation %q", c.Expected)
			}
			// The invariant: never allow where ask or deny is expected.
			if ev.Decision == gate.Allow && want != gate.Allow {
				t.Fatalf("ALLOW where %s is expected: %q\n  rules %s\n  reason %s\n  why %s", c.Expected, c.Command, c.Rules, ev.Reason, c.Why)
			}
			switch {
			case ev.Decision == want:
				exact++
			case alt != "" && ev.Decision == alt:
				accepted++
			case corpusStricter[c.ID] != "" && gate.Stricter(ev.Decision, want) == ev.Decision:
				stricter++
			default:
				t.Errorf("%s for %q, want %s\n  rules %s\n  reason %s\n  verdicts %s\n  why %s",
					ev.Decision, c.Command, c.Expected, c.Rules, ev.Reason, verdicts(ev), c.Why)
			}
		})
	}
	t.Logf("corpus: %d decision cases: %d exact, %d accepted alternative, %d stricter (allowlisted)", total, exact, accepted, stricter)
	if !t.Failed() && exact+accepted+stricter != total {
		t.Errorf("counted %d of %d cases", exact+accepted+stricter, total)
	}
	for id := range corpusStricter {
		if !seen[id] {
			t.Errorf("corpusStricter names %s, which is not a decision case", id)
		}
	}
}

func verdicts(ev gate.Evaluation) string {
	var b strings.Builder
	for _, v := range ev.Commands {
		fmt.Fprintf(&b, "[%s %s %q: %s] ", v.Kind, v.Decision, v.Subject, v.Reason)
	}
	return b.String()
}

// TestCorpusAlwaysPatterns checks the Always patterns the gate offers for
// the corpus's always_allow_generation cases (no rules: everything asks),
// and that saving them makes the same call allow (the cascade).
func TestCorpusAlwaysPatterns(t *testing.T) {
	// The corpus states the expected pattern in prose; these are its exact
	// readings. "" means no pattern (the button approves once).
	want := map[string][]string{
		"O03": {"npm run build"},
		"O04": {"git log *"},
		"O06": {`git -C /repo push origin main`},                // exact: the matcher keeps -C for allow
		"O07": {"sudo apt-get install jq", "apt-get install *"}, // never `sudo *`
		"O08": {"npm test *"},
		"O09": {"bash -c 'npm test'", "npm test *"}, // the wrapper exactly, the inner by arity
		"O12": nil,
		"O15": {"find *"},
		"O16": {"sed -n *"},
		"O18": {`npm run build:\{a,b\}`},
	}
	for _, c := range loadCorpus(t) {
		if c.Kind != "always_allow_generation" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) {
			w, ok := want[c.ID]
			if !ok {
				t.Fatalf("no expectation for %s (corpus says %q)", c.ID, c.Generated)
			}
			p := compile(t, gate.PolicySpec{File: "empty", Home: "/home/u"})
			call := shellCall(c.Command)
			ev := p.Evaluate(call, gate.Env{})
			if ev.Decision != gate.Ask {
				t.Fatalf("decision %s", ev.Decision)
			}
			if strings.Join(ev.Always, "\n") != strings.Join(w, "\n") {
				t.Fatalf("always %q, want %q (corpus: %s)", ev.Always, w, c.Generated)
			}
			if len(w) == 0 {
				return
			}
			var rules []gate.AlwaysRule
			for i, ap := range ev.AlwaysRules {
				rules = append(rules, gate.AlwaysRule{ID: fmt.Sprint(i), Agent: "claude", Tool: ap.Tool, Pattern: ap.Pattern, Scope: gate.ScopeAgent})
			}
			set, err := gate.CompileAlways(rules)
			if err != nil {
				t.Fatal(err)
			}
			if ev := p.Evaluate(call, gate.Env{Always: set}); ev.Decision != gate.Allow {
				t.Fatalf("after saving %q: %s (%s)", ev.Always, ev.Decision, ev.Reason)
			}
		})
	}
}

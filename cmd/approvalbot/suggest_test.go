package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"approvalbot/config"
	"approvalbot/gate"
)

// everydayLines reads gate/testdata/everyday.txt's one-line commands, with
// whether a line is marked risky.
func everydayLines(t *testing.T) (lines []string, risky []bool) {
	t.Helper()
	f, err := os.Open("../../gate/testdata/everyday.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inBlock := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "#begin"):
			inBlock = true
		case l == "#end":
			inBlock = false
		case inBlock, strings.TrimSpace(l) == "", strings.HasPrefix(strings.TrimSpace(l), "#"):
		default:
			cmd, isRisky := strings.CutSuffix(l, "  #risky")
			lines, risky = append(lines, cmd), append(risky, isRisky)
		}
	}
	return lines, risky
}

// TestSuggestAfterADay simulates a day: every everyday line the default
// rules ask about is approved three times by a person, except the risky
// ones, which are denied. suggest then proposes rules; they never cover a
// risky line, and the test reports how much more of the sample they allow.
func TestSuggestAfterADay(t *testing.T) {
	spec, err := config.ParseRules(config.DefaultRulesName, config.DefaultRules(), "/home/dev")
	if err != nil {
		t.Fatal(err)
	}
	p, err := gate.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	lines, risky := everydayLines(t)
	call := func(cmd string) gate.Call {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return gate.Call{Agent: "claude", SessionID: "s", Tool: "Bash", Input: in, Cwd: "/home/dev/proj"}
	}
	var decided []*gate.Approval
	before := 0
	for i, cmd := range lines {
		ev := p.Evaluate(call(cmd), gate.Env{})
		if ev.Decision == gate.Allow {
			before++
			continue
		}
		if ev.Decision != gate.Ask {
			continue
		}
		st := gate.StatusApproved
		if risky[i] {
			st = gate.StatusDenied
		}
		for range 3 {
			decided = append(decided, &gate.Approval{Agent: "claude", Tool: "Bash", Status: st, Evaluation: ev, Judged: &gate.Judged{Command: cmd}})
		}
	}
	ss := suggest(decided, 3)
	if len(ss) == 0 {
		t.Fatal("no suggestions after a day of approvals")
	}
	var rules []gate.AlwaysRule
	for _, s := range ss {
		if strings.HasSuffix(s.Pattern, "-rf *") || s.Pattern == "*" {
			t.Errorf("suggested a broad pattern: %+v", s)
		}
		rules = append(rules, gate.AlwaysRule{ID: s.Pattern, Agent: s.Agent, Tool: s.Tool, Pattern: s.Pattern, Scope: gate.ScopeAgent})
	}
	set, err := gate.CompileAlways(rules)
	if err != nil {
		t.Fatal(err)
	}
	after := 0
	for i, cmd := range lines {
		ev := p.Evaluate(call(cmd), gate.Env{Always: set, Now: time.Now()})
		if ev.Decision == gate.Allow {
			after++
			if risky[i] {
				t.Errorf("a suggestion allows the risky line %q (%s)", cmd, ev.Reason)
			}
		}
	}
	t.Logf("suggest after one simulated day: %d rules; allowed %d of %d lines before (%.1f%%), %d after (%.1f%%)",
		len(ss), before, len(lines), 100*float64(before)/float64(len(lines)), after, 100*float64(after)/float64(len(lines)))
	if after <= before {
		t.Errorf("suggestions allow nothing more (%d -> %d)", before, after)
	}
}

func TestSuggestNeverForRiskyOrDenied(t *testing.T) {
	ev := gate.Evaluation{Decision: gate.Ask, AlwaysRules: []gate.AlwaysPattern{{Tool: "Bash", Pattern: "make test *"}}}
	risky := ev
	risky.Uncertain = true
	mk := func(st gate.Status, ev gate.Evaluation, n int) []*gate.Approval {
		var out []*gate.Approval
		for range n {
			out = append(out, &gate.Approval{Agent: "a", Tool: "Bash", Status: st, Evaluation: ev})
		}
		return out
	}
	if ss := suggest(mk(gate.StatusApproved, ev, 3), 3); len(ss) != 1 || ss[0].Pattern != "make test *" || ss[0].Approved != 3 {
		t.Errorf("3 approvals: %+v", ss)
	}
	if ss := suggest(mk(gate.StatusApproved, ev, 2), 3); len(ss) != 0 {
		t.Errorf("2 approvals: %+v", ss)
	}
	if ss := suggest(append(mk(gate.StatusApproved, ev, 5), mk(gate.StatusDenied, ev, 1)...), 3); len(ss) != 0 {
		t.Errorf("approved 5, denied once: %+v", ss)
	}
	if ss := suggest(append(mk(gate.StatusApproved, ev, 5), mk(gate.StatusApproved, risky, 1)...), 3); len(ss) != 0 {
		t.Errorf("one of them not understood: %+v", ss)
	}
}

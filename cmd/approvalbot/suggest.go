package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/gobwas/glob"

	"approvalbot/gate"
	"approvalbot/prompt"
)

const suggestUsage = `suggest [--min N] [--agent NAME] [--apply] [--yes]

Reads the approvals people decided and proposes Always rules for calls they
approved again and again (at least --min times, default 3, with the same
Always pattern, and never denied), never for calls with a risk label or
that the analysis did not fully understand. Prints them as JSONC to paste
into the rules file; --apply adds them as Always rules of each agent (it
asks first, unless --yes).`

// suggestion is one proposed rule and the evidence for it.
type suggestion struct {
	Agent    string `json:"agent"`
	Tool     string `json:"tool"`
	Pattern  string `json:"pattern"`
	Approved int    `json:"approved"`
	Example  string `json:"example"`
}

// suggest groups decided approvals by agent and Always pattern: a pattern
// is proposed when people approved it at least min times and never denied
// a call it would cover, and none of them was risky or not understood.
func suggest(approvals []*gate.Approval, min int) []suggestion {
	type key struct{ agent, tool, pattern string }
	type tally struct {
		approved int
		blocked  bool
		example  string
	}
	counts := map[key]*tally{}
	for _, a := range approvals {
		ev := a.Evaluation
		for _, ap := range ev.AlwaysRules {
			k := key{a.Agent, ap.Tool, ap.Pattern}
			t := counts[k]
			if t == nil {
				t = &tally{}
				counts[k] = t
			}
			switch a.Status {
			case gate.StatusApproved, gate.StatusApprovedAlways:
				if ev.Uncertain || len(prompt.Risks(a)) > 0 {
					t.blocked = true
					continue
				}
				t.approved++
				if t.example == "" && a.Judged != nil {
					t.example = a.Judged.Command
				}
			case gate.StatusDenied, gate.StatusDeniedStop:
				t.blocked = true
			}
		}
	}
	// A denied call blocks every pattern that would cover it, not only
	// its own (`git stash *` from `git stash` covers `git stash drop`).
	var denied []*gate.Approval
	for _, a := range approvals {
		if a.Status == gate.StatusDenied || a.Status == gate.StatusDeniedStop {
			denied = append(denied, a)
		}
	}
	var out []suggestion
	for k, t := range counts {
		if t.blocked || t.approved < min || coversDenied(k.agent, k.tool, k.pattern, denied) {
			continue
		}
		out = append(out, suggestion{Agent: k.agent, Tool: k.tool, Pattern: k.pattern, Approved: t.approved, Example: t.example})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Approved != out[j].Approved {
			return out[i].Approved > out[j].Approved
		}
		return out[i].Agent+out[i].Tool+out[i].Pattern < out[j].Agent+out[j].Tool+out[j].Pattern
	})
	return out
}

// coversDenied reports whether pattern (rules syntax: a trailing " *" also
// matches nothing) matches a part of a call people denied.
func coversDenied(agent, tool, pattern string, denied []*gate.Approval) bool {
	g, err := glob.Compile(pattern)
	if err != nil {
		return true
	}
	var bare *glob.Pattern
	if b, ok := strings.CutSuffix(pattern, " *"); ok {
		bare, _ = glob.Compile(b)
	}
	for _, a := range denied {
		if a.Agent != agent || a.Tool != tool {
			continue
		}
		for _, v := range a.Evaluation.Commands {
			if g.Match(v.Subject) || bare != nil && bare.Match(v.Subject) {
				return true
			}
		}
	}
	return false
}

// printSuggestions writes the suggestions as a JSONC "agents" block.
func printSuggestions(e *env, ss []suggestion) {
	if len(ss) == 0 {
		fmt.Fprintln(e.stdout, "// no suggestions: nothing was approved often enough without a risk or a denial")
		return
	}
	byAgent := map[string][]suggestion{}
	var agents []string
	for _, s := range ss {
		if _, ok := byAgent[s.Agent]; !ok {
			agents = append(agents, s.Agent)
		}
		byAgent[s.Agent] = append(byAgent[s.Agent], s)
	}
	sort.Strings(agents)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	fmt.Fprintln(e.stdout, "// Paste into your rules file's \"agents\" section (approvalbot suggest).")
	fmt.Fprintln(e.stdout, `"agents": {`)
	for _, a := range agents {
		fmt.Fprintf(e.stdout, "  %s: {\n", q(a))
		for _, s := range byAgent[a] {
			fmt.Fprintf(e.stdout, "    // approved %d times, e.g. %s\n", s.Approved, strings.ReplaceAll(display(s.Example), "\n", " "))
			fmt.Fprintf(e.stdout, "    %s: { %s: \"allow\" },\n", q(s.Tool), q(s.Pattern))
		}
		fmt.Fprintln(e.stdout, "  },")
	}
	fmt.Fprintln(e.stdout, "},")
}

// runSuggest is `approvalbot suggest`.
func runSuggest(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "suggest", suggestUsage)
	min := fs.Int("min", 3, "least number of approvals of one pattern")
	agent := fs.String("agent", "", "only this agent")
	apply := fs.Bool("apply", false, "add the suggestions as Always rules")
	yes := fs.Bool("yes", false, "with --apply: do not ask")
	asJSON := fs.Bool("json", false, "print the suggestions as JSON")
	if _, code, ok := parseFlags(e, fs, args, 0); !ok {
		return code
	}
	c := approverClientFromEnv(e)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	var decided []*gate.Approval
	for _, st := range []gate.Status{gate.StatusApproved, gate.StatusApprovedAlways, gate.StatusDenied, gate.StatusDeniedStop} {
		list, err := c.List(ctx, st)
		if err != nil {
			return clientFailed(e, "suggest", c, err)
		}
		for _, a := range list {
			if *agent == "" || a.Agent == *agent {
				decided = append(decided, a)
			}
		}
	}
	ss := suggest(decided, *min)
	if *asJSON {
		if ss == nil {
			ss = []suggestion{}
		}
		if err := printJSON(e, ss); err != nil {
			return exitFailure
		}
	} else {
		printSuggestions(e, ss)
	}
	if !*apply || len(ss) == 0 {
		return exitOK
	}
	if !*yes {
		fmt.Fprintf(e.stderr, "add these %d Always rules? [y/N] ", len(ss))
		var answer string
		fmt.Fscanln(e.stdin, &answer)
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(e.stderr, "nothing added")
			return exitOK
		}
	}
	for _, s := range ss {
		r, err := c.AddRule(ctx, gate.AlwaysRule{Agent: s.Agent, Tool: s.Tool, Pattern: s.Pattern, Scope: gate.ScopeAgent})
		if err != nil {
			return clientFailed(e, "suggest", c, err)
		}
		fmt.Fprintf(e.stdout, "added %s: %s for %s (%s)\n", s.Tool, s.Pattern, s.Agent, r.ID)
	}
	return exitOK
}

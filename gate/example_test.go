package gate_test

import (
	"encoding/json"
	"fmt"

	"approvalbot/gate"
)

// A policy judges each part of a call; the whole is the strictest part.
// Asks the analysis raises (not understood, hazards) are marked uncertain:
// no Always rule or approve_all answers them.
func ExamplePolicy_Evaluate() {
	p, err := gate.Compile(gate.PolicySpec{
		File: "rules.jsonc",
		Rules: []gate.RuleSpec{
			{Tool: "Bash", Pattern: "*", Action: gate.Ask, File: "rules.jsonc", Line: 2},
			{Tool: "Bash", Pattern: "git status *", Action: gate.Allow, File: "rules.jsonc", Line: 3},
			{Tool: "Bash", Pattern: "sort *", Action: gate.Allow, File: "rules.jsonc", Line: 4},
			{Tool: "Bash", Pattern: "rm -rf *", Action: gate.Deny, File: "rules.jsonc", Line: 5},
		},
		Home: "/home/u",
	})
	if err != nil {
		panic(err)
	}
	for _, line := range []string{
		"git status --short",
		"git status && npm install",
		"sort --out=/tmp/x data.txt",
		"git status; rm -rf build",
	} {
		in, _ := json.Marshal(map[string]string{"command": line})
		ev := p.Evaluate(gate.Call{Tool: "Bash", Input: in, Cwd: "/work/p"}, gate.Env{})
		fmt.Printf("%-5s uncertain=%-5v %s\n", ev.Decision, ev.Uncertain, ev.Reason)
	}
	// Output:
	// allow uncertain=false allowed: `git status --short`: allowed by rules.jsonc:3 (Bash: git status *)
	// ask   uncertain=false ask: `npm install`: ask by rules.jsonc:2 (Bash: *)
	// ask   uncertain=true  ask: `sort --out=/tmp/x data.txt`: hazard: writes a file (sort --output) (allowed by rules.jsonc:4 (Bash: sort *) does not cover it)
	// deny  uncertain=false denied: `rm -rf build`: denied by rules.jsonc:5 (Bash: rm -rf *)
}

package watch

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"approvalbot/gate"
)

// t0 is the fixed clock of the pure tests.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testGuard is the guard time the model tests use.
const testGuard = 500 * time.Millisecond

func bashApproval(id, cmd string, created time.Time) *gate.Approval {
	input, _ := json.Marshal(map[string]string{"command": cmd})
	return &gate.Approval{
		ID: id, Status: gate.StatusPending,
		Agent: "claude", SessionID: "sess-42", Tool: "Bash", Input: input, Cwd: "/home/dev/proj",
		Judged: &gate.Judged{Kind: gate.KindShell, Command: cmd},
		Evaluation: gate.Evaluation{
			Decision: gate.Ask, Kind: gate.KindShell, Reason: "no rule matched",
			Rule:        &gate.RuleRef{Layer: gate.LayerStatic, File: "rules.jsonc", Line: 4, Tool: "Bash", Pattern: "*", Action: gate.Ask},
			Always:      []string{"git push *"},
			AlwaysRules: []gate.AlwaysPattern{{Tool: "Bash", Pattern: "git push *"}},
		},
		CreatedAt: created, Deadline: created.Add(10 * time.Minute),
	}
}

func editApproval(id string, created time.Time) *gate.Approval {
	edit := gate.Edit{Old: "func main() {\n\tfmt.Println(\"hi\")\n}", New: "func main() {\n\tfmt.Println(\"hello, world\")\n\tos.Exit(0)\n}"}
	input, _ := json.Marshal(map[string]string{"file_path": "/home/dev/proj/main.go", "old_string": edit.Old, "new_string": edit.New})
	return &gate.Approval{
		ID: id, Status: gate.StatusPending,
		Agent: "claude", SessionID: "sess-42", Tool: "Edit", Input: input, Cwd: "/home/dev/proj",
		Judged: &gate.Judged{Kind: gate.KindWrite, Paths: []string{"/home/dev/proj/main.go"}, Edits: []gate.Edit{edit}},
		Evaluation: gate.Evaluation{Decision: gate.Ask, Kind: gate.KindWrite, Reason: "no rule matched",
			Always: []string{"/home/dev/proj/main.go"}},
		CreatedAt: created, Deadline: created.Add(10 * time.Minute),
	}
}

// final returns a copy of a decided with status by who via where.
func final(a *gate.Approval, st gate.Status, by, via, reason string) *gate.Approval {
	c := *a
	c.Status = st
	c.DecidedBy = by
	c.Via = via
	c.Reason = reason
	at := t0.Add(time.Minute)
	c.DecidedAt = &at
	switch st {
	case gate.StatusApproved, gate.StatusApprovedAlways:
		c.Decision = gate.Allow
	default:
		c.Decision = gate.Deny
	}
	return &c
}

var sgrRE = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

// plain strips terminal sequences.
func plain(s string) string { return sgrRE.ReplaceAllString(s, "") }

// boxText returns the inner text of the box's rows, trimmed of the border.
func boxText(screen string) []string {
	var out []string
	for _, l := range strings.Split(plain(screen), "\n") {
		if strings.HasPrefix(l, "│ ") && strings.HasSuffix(l, " │") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(l, "│ "), " │"))
		}
	}
	return out
}

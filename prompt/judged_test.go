package prompt

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"approvalbot/gate"
	"approvalbot/store"
)

// FuzzPromptShowsJudged submits random calls to a real gate and checks that
// the prompt built from what comes back shows what the gate judged: the
// command line it analysed (a string as sent; an argv re-quoted so that a
// shell reads back exactly those words), and every path it judged (each
// one a verdict of the evaluation).
func FuzzPromptShowsJudged(f *testing.F) {
	for _, s := range []string{"git status", "touch 'a; rm -rf ~'", "a; rm -rf ~", "echo \u202e", "", " ", "x\ny", `"`, "$(id)"} {
		f.Add(s, "notes.txt", false)
		f.Add(s, "~/.claude/settings.json", true)
	}
	st, err := store.Open(filepath.Join(f.TempDir(), "approvalbot.db"), store.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	p, err := gate.Compile(gate.PolicySpec{File: "deny.jsonc", Home: "/home/u", Rules: []gate.RuleSpec{
		{Tool: "*", Pattern: "*", Action: gate.Deny, File: "deny.jsonc", Line: 1}, // answered at once: nothing pends
	}})
	if err != nil {
		f.Fatal(err)
	}
	g := gate.New(gate.Config{}, p, st, nil)
	defer g.Close()
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, text, path string, argv bool) {
		var input []byte
		var words []string
		if argv {
			words = strings.Fields(text)
			input, _ = json.Marshal(map[string]any{"command": append([]string{"touch"}, words...)})
		} else {
			input, _ = json.Marshal(map[string]string{"command": text})
		}
		a, err := g.Submit(ctx, gate.Call{Agent: "fuzz", SessionID: "s", Tool: "Bash", Input: input, Cwd: "/p"})
		if err != nil {
			t.Fatalf("submit %s: %v", input, err)
		}
		c := Build(a, a.CreatedAt)
		j := a.Judged
		if j == nil || j.Kind != gate.KindShell {
			t.Fatalf("no judged shell input: %+v", j)
		}
		if j.Command != "" && (c.BodyKind != BodyCommand || c.Body != Visible(j.Command)) {
			t.Fatalf("prompt shows %s %q, the gate judged %q", c.BodyKind, c.Body, j.Command)
		}
		var sent struct{ Command any }
		_ = json.Unmarshal(input, &sent)
		switch cmd := sent.Command.(type) {
		case string:
			if strings.TrimSpace(cmd) != "" && j.Command != cmd {
				t.Fatalf("judged %q, the agent sent %q", j.Command, cmd)
			}
		case []any:
			// A shell word cannot hold NUL (the analysis asks for it); the
			// prompt shows it as ⟨U+0000⟩ instead.
			if strings.ContainsRune(text, 0) {
				break
			}
			if got := shellWords(t, j.Command); !equalWords(got, cmd) {
				t.Fatalf("judged %q reads back as %q, the agent sent %q", j.Command, got, cmd)
			}
		}

		// A path tool: the prompt names every path the evaluation judged.
		input, _ = json.Marshal(map[string]string{"file_path": path, "content": text})
		a, err = g.Submit(ctx, gate.Call{Agent: "fuzz", SessionID: "s", Tool: "Write", Input: input, Cwd: "/p"})
		if err != nil {
			t.Fatalf("submit %s: %v", input, err)
		}
		c = Build(a, a.CreatedAt)
		shown := ""
		for _, fl := range c.Fields {
			if fl.Name == "Path" {
				shown = fl.Value
			}
		}
		if want := VisibleLine(strings.Join(a.Judged.Paths, ", ")); shown != want {
			t.Fatalf("prompt shows path %q, the gate judged %q", shown, a.Judged.Paths)
		}
		for _, v := range a.Evaluation.Commands {
			if v.Kind == "path" && !contains(a.Judged.Paths, v.Subject) {
				t.Fatalf("the evaluation judged %q, the prompt shows %q", v.Subject, a.Judged.Paths)
			}
		}
		if path != "" && len(a.Judged.Paths) != 1 {
			t.Fatalf("judged paths %q for the one path %q", a.Judged.Paths, path)
		}
	})
}

// shellWords reads a command line back as a shell would: the words of its
// one simple command, or nil if it is anything else.
func shellWords(t *testing.T, line string) []string {
	file, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil || len(file.Stmts) != 1 {
		t.Fatalf("judged argv %q does not parse as one command: %v", line, err)
	}
	call, ok := file.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 {
		t.Fatalf("judged argv %q is not one simple command", line)
	}
	out, err := expand.Fields(&expand.Config{}, call.Args...)
	if err != nil {
		t.Fatalf("judged argv %q: %v", line, err)
	}
	return out
}

func equalWords(got []string, sent []any) bool {
	if len(got) != len(sent) {
		return false
	}
	for i, w := range sent {
		if s, _ := w.(string); s != got[i] {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

package gate

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// An agent's memory file (CLAUDE.md, GEMINI.md, Cursor's rules) may import
// other files with @path: the agent loads them into its context when a
// session starts, with no tool call the gate sees. A file the Read rules
// deny, imported so, is read all the same.

// memoryFile reports a file an agent loads with its @imports.
func memoryFile(abs string) bool {
	base := filepath.Base(abs)
	switch base {
	case "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md", "AGENTS.md", ".cursorrules":
		return true
	}
	return strings.HasSuffix(base, ".mdc") && strings.Contains(abs, "/.cursor/rules/")
}

// judgeImports judges the @imports a write tool puts into a memory file:
// one the Read rules deny, or one that cannot be told, asks a person.
func (s *evalState) judgeImports(raw string) {
	ps, ok := resolvePath(raw, s.cwd, s.p.home)
	if !ok || !memoryFile(ps.abs) {
		return
	}
	s.judgeImportsInto(&ps)
}

// judgeImportsInto judges the @imports of the input's text as written
// into the memory file ps.
func (s *evalState) judgeImportsInto(ps *pathSubject) {
	var in any
	if json.Unmarshal(s.c.Input, &in) != nil {
		return
	}
	dir := filepath.Dir(ps.abs)
	for _, text := range inputStrings(in, 0) {
		for _, imp := range importsIn(text) {
			pt := part{v: Verdict{Kind: "read", Subject: imp}}
			if strings.ContainsAny(imp, "*?[{$`") {
				s.uncertain(&pt, "not understood: "+ps.abs+" would import `@"+imp+"` into the agent's context")
				s.parts = append(s.parts, pt)
				return
			}
			if what, ref, denied := s.readDenied(imp, dir); denied {
				pt.v.Subject = what
				s.uncertain(&pt, "not understood: "+ps.abs+" would import "+what+" into the agent's context, which is "+ruleReason(ref))
				s.parts = append(s.parts, pt)
				return
			}
		}
	}
}

// importsIn returns the @path words of a text.
func importsIn(text string) []string {
	var out []string
	for i := strings.IndexByte(text, '@'); i >= 0; {
		if i == 0 || strings.IndexByte(" \t\n\r(`\"'[", text[i-1]) >= 0 {
			end := i + 1
			for end < len(text) && strings.IndexByte(" \t\n\r)`\"']", text[end]) < 0 {
				end++
			}
			if p := strings.TrimRight(text[i+1:end], ".,;:!"); p != "" {
				out = append(out, p)
			}
		}
		n := strings.IndexByte(text[i+1:], '@')
		if n < 0 {
			break
		}
		i += 1 + n
	}
	return out
}

// inputStrings returns every string of a decoded JSON input (the content
// of a write, the new text of an edit, a patch), nested a few levels.
func inputStrings(v any, depth int) []string {
	if depth > 6 {
		return nil
	}
	var out []string
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = append(out, inputStrings(e, depth+1)...)
		}
	case map[string]any:
		for _, e := range x {
			out = append(out, inputStrings(e, depth+1)...)
		}
	}
	return out
}

package gate

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
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
	return strings.HasSuffix(base, ".mdc") && strings.Contains(abs, "/.cursor/rules/") ||
		strings.HasSuffix(base, ".md") && strings.Contains(abs, "/.claude/rules/")
}

// maxImportDepth is how far imports are followed (Claude Code: 5 hops).
const maxImportDepth = 5

// judgeImports judges the @imports a write tool puts into a memory file,
// or into a file a memory file imports: one the Read rules deny, there or
// in what it imports in turn, or one that cannot be told, asks a person.
func (s *evalState) judgeImports(raw string) {
	ps, ok := resolvePath(raw, s.cwd, s.p.home)
	if !ok || !memoryFile(ps.abs) && !s.importedByMemory(ps.abs) {
		return
	}
	s.judgeImportsInto(&ps)
}

// importedByMemory reports a file that the memory files an agent loads in
// this directory (and those above it, and the user's) import, at any depth.
func (s *evalState) importedByMemory(abs string) bool {
	if s.imported == nil {
		s.imported = map[string]bool{}
		var roots []string
		for d := s.cwd; d != "" && d != "/" && d != "."; d = filepath.Dir(d) {
			for _, n := range [...]string{"CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md", "GEMINI.md", "AGENTS.md"} {
				roots = append(roots, filepath.Join(d, n))
			}
			rulesDir := filepath.Join(d, ".claude", "rules")
			rules, _ := filepath.Glob(filepath.Join(rulesDir, "*.md"))
			roots = append(roots, rules...)
			if real, err := filepath.EvalSymlinks(rulesDir); err == nil && real != rulesDir {
				// A rules directory that is a link: what is written where
				// it leads is a rule file.
				s.imported["\x01"+real] = true
			}
		}
		if s.p.home != "" {
			roots = append(roots, filepath.Join(s.p.home, ".claude", "CLAUDE.md"), filepath.Join(s.p.home, ".gemini", "GEMINI.md"))
		}
		for _, r := range roots {
			if real, err := filepath.EvalSymlinks(r); err == nil && real != r {
				s.imported[real] = true // a memory file that is a link: its target is one
			}
			s.collectImports(r, 0)
		}
	}
	if filepath.Ext(abs) == ".md" && s.imported["\x01"+filepath.Dir(abs)] {
		return true
	}
	// Memory files below the call's directory that hold the path (Gemini
	// loads every GEMINI.md down the tree, Claude Code a CLAUDE.md when it
	// reads beside it).
	for d := filepath.Dir(abs); s.cwd != "" && d != s.cwd && under(d, s.cwd); d = filepath.Dir(d) {
		for _, n := range [...]string{"CLAUDE.md", "CLAUDE.local.md", "GEMINI.md", "AGENTS.md"} {
			if r := filepath.Join(d, n); !s.imported["\x00"+r] {
				s.imported["\x00"+r] = true // (a root already followed)
				s.collectImports(r, 0)
			}
		}
	}
	return s.imported[abs]
}

// collectImports adds what the file at abs imports, at any depth.
func (s *evalState) collectImports(abs string, depth int) {
	if depth > maxImportDepth {
		return
	}
	for _, imp := range fileImports(abs, s.p.home) {
		if !s.imported[imp] {
			s.imported[imp] = true
			s.collectImports(imp, depth+1)
		}
	}
}

// fileImports returns the paths a file on disk imports, absolute.
func fileImports(abs, home string) []string {
	f, err := os.Open(abs)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil
	}
	var out []string
	for _, imp := range importsIn(string(b)) {
		if ps, ok := resolvePath(imp, filepath.Dir(abs), home); ok {
			out = append(out, ps.abs)
		}
	}
	return out
}

// judgeImportsInto judges the @imports of the input's text as written
// into the memory file ps.
func (s *evalState) judgeImportsInto(ps *pathSubject) {
	var in any
	if json.Unmarshal(s.c.Input, &in) != nil {
		return
	}
	dir := filepath.Dir(ps.abs)
	texts := inputStrings(in, 0)
	for _, t := range texts {
		if strings.Contains(t, "*** Move to:") || strings.Contains(t, "\nrename to ") {
			// A file moved onto a memory file brings its own imports.
			pt := part{v: Verdict{Kind: "read", Subject: ps.abs}}
			s.uncertain(&pt, "not understood: a patch moves a file onto "+ps.abs+", an agent's memory file whose imports are not read here")
			s.parts = append(s.parts, pt)
			return
		}
		// A patch's added lines: + before the text.
		texts = append(texts, strings.ReplaceAll("\n"+t, "\n+", "\n"))
	}
	edited, ok, exact := editedText(ps.abs, in)
	if !exact {
		// opencode matches an edit's old text loosely: what the file
		// becomes is not known here.
		pt := part{v: Verdict{Kind: "read", Subject: ps.abs}}
		s.uncertain(&pt, "not understood: an edit of "+ps.abs+", an agent's memory file, whose old text is not in the file as written")
		s.parts = append(s.parts, pt)
		return
	}
	if ok {
		// An edit lands in the file's text: "See @docs/notes.md" with
		// docs/notes.md replaced by .env imports .env.
		texts = append(texts, edited)
	}
	for _, text := range texts {
		if s.c.Tool == "save_memory" {
			// Gemini drops a leading - and turns < > into spaces.
			text = strings.ReplaceAll(text, "@", " @")
		}
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
			// What an imported file imports in turn is loaded too.
			if ips, ok := resolvePath(imp, dir, s.p.home); ok {
				if what, ref, denied := s.deniedImport(ips.abs, 1); denied {
					pt.v.Subject = what
					s.uncertain(&pt, "not understood: "+ps.abs+" would import "+imp+", which imports "+what+", which is "+ruleReason(ref))
					s.parts = append(s.parts, pt)
					return
				}
			}
		}
	}
}

// editedText returns the text of the file at abs after the replacements
// an edit tool's input makes (every occurrence: the stricter reading);
// exact is false when an old text is not in the file as written.
func editedText(abs string, in any) (text string, ok, exact bool) {
	m, isMap := in.(map[string]any)
	if !isMap {
		return "", false, true
	}
	var pairs [][2]string
	add := func(e map[string]any, oldKey, newKey string) {
		o, ok1 := e[oldKey].(string)
		n, ok2 := e[newKey].(string)
		if ok1 && ok2 && o != "" {
			pairs = append(pairs, [2]string{o, n})
		}
	}
	add(m, "old_string", "new_string")
	add(m, "oldString", "newString")
	add(m, "old_str", "new_str")
	if edits, ok := m["edits"].([]any); ok {
		for _, e := range edits {
			if em, ok := e.(map[string]any); ok {
				add(em, "old_string", "new_string")
				add(em, "oldString", "newString")
			}
		}
	}
	if len(pairs) == 0 {
		return "", false, true
	}
	b, err := os.ReadFile(abs)
	if err != nil || len(b) > 1<<20 {
		return "", false, true
	}
	text = string(b)
	for _, p := range pairs {
		if !strings.Contains(text, p[0]) {
			return "", false, false
		}
		text = strings.ReplaceAll(text, p[0], p[1])
	}
	return text, true, true
}

// deniedImport finds, among what the file at abs imports at any depth, a
// file the Read rules deny.
func (s *evalState) deniedImport(abs string, depth int) (string, RuleRef, bool) {
	if depth > maxImportDepth {
		return "", RuleRef{}, false
	}
	for _, imp := range fileImports(abs, s.p.home) {
		if what, ref, denied := s.readDenied(imp, "/"); denied {
			return what, ref, true
		}
		if what, ref, denied := s.deniedImport(imp, depth+1); denied {
			return what, ref, true
		}
	}
	return "", RuleRef{}, false
}

// importsIn returns the @path words of a text as Claude Code finds them:
// an @ at the start or after white space (any Unicode space), the path up
// to the next white space, "\ " an escaped space. Each is given as found
// and without trailing punctuation or a #fragment, which other readers
// drop: every form is judged.
func importsIn(text string) []string {
	var out []string
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		if rs[i] != '@' || i > 0 && !importSpace(rs[i-1]) {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(rs) && !importSpace(rs[j]); j++ {
			if rs[j] == '\\' && j+1 < len(rs) && rs[j+1] == ' ' {
				b.WriteRune(' ')
				j++
				continue
			}
			b.WriteRune(rs[j])
		}
		i = j - 1
		p := b.String()
		for _, form := range []string{p, strings.TrimRight(p, ".,;:!?)]}'\"`"), strings.SplitN(p, "#", 2)[0]} {
			if form != "" && !slices.Contains(out, form) {
				out = append(out, form)
			}
		}
	}
	return out
}

// importSpace is white space as JavaScript's \s reads it (U+FEFF too).
func importSpace(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' }

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

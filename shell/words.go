package shell

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxBraceFields caps brace expansion of one word; a larger expansion is
// reported as a single dynamic field rather than allocated.
const maxBraceFields = 256

// field is one word of a command after expansion as far as it is known.
type field struct {
	s        string // the resolved text, Dyn for run-time parts
	pat      string // for a glob: the pathname pattern (path.Match syntax), "" when not static
	dyn      bool   // s contains Dyn
	glob     bool   // an unquoted pathname pattern (or a variable holding names matching one)
	expanded bool   // had a parameter, command, arithmetic or process substitution, or ~user
	quoted   bool   // had a quoted part (bash never drops it as empty)
	rec      bool   // pat's `*` also crosses `/` (names found by find)
	numeric  bool   // only ever digits (arithmetic, $#, $?, ...)
	procsub  bool   // a process substitution: a /dev/fd path to a pipe whose writer is analyzed
	optRisk  bool   // a pattern whose names, if one started with "-", would be options
	split    bool   // had an unquoted expansion: bash may split it into several words
}

func dynField() field { return field{s: Dyn, dyn: true, expanded: true} }

// wordCtx says how bash expands a word where it appears.
type wordCtx int

const (
	ctxArgv    wordCtx = iota // command words: braces, splitting, globbing
	ctxNoSplit                // assignment values, [[ ]] operands, case words, here-strings
	ctxPattern                // case patterns and the right side of [[ == ]]
	ctxHeredoc                // an unquoted heredoc body
)

// resolver expands words in the analyzer's current state, walking every
// substitution it meets so that the commands inside are recorded too.
type resolver struct {
	a     *analyzer
	buf   []byte
	patOn bool // the word being resolved may be a pathname pattern
}

// argv appends the fields of ws as bash would make them into command words.
func (r *resolver) argv(ws []*syntax.Word, out []field) []field {
	for _, w := range ws {
		out = r.word(w, out)
	}
	return out
}

// word appends the fields of one command word: brace expansion, then
// expansion, splitting and globbing.
func (r *resolver) word(w *syntax.Word, out []field) []field {
	if l, ok := w.Parts[0].(*syntax.Lit); ok && len(w.Parts) == 1 && l.Value == "}" {
		r.a.notUnderstood("a `}` word, which ends a brace group to zsh")
	}
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && zshOnlyRange(l.Value) {
			r.a.notUnderstood("a brace range of two characters bash leaves as text and zsh expands ({1..v})")
		}
	}
	if braceAcrossParts(w) {
		r.a.notUnderstood("a brace expansion across quotes or expansions")
	}
	if hasBrace(w) {
		return r.braces(w, out)
	}
	return r.split(w, out)
}

// braces appends the fields of a word with brace candidates. Bash drops an
// unquoted word that brace expansion leaves empty (`git {,} -c ...`), which
// shifts every later word; mvdan/sh does not, so such a word is not
// understood.
func (r *resolver) braces(w *syntax.Word, out []field) []field {
	// SplitBraces rewrites the word it is given: work on a copy.
	cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
	if !syntax.SplitBraces(cp) {
		return r.split(w, out)
	}
	n := 0
	for bw, err := range expand.BracesSeq(nil, cp) {
		if err != nil || n >= maxBraceFields {
			r.a.notUnderstood("a brace expansion too large to follow")
			return append(out, dynField())
		}
		before := len(out)
		out = r.split(bw, out)
		if len(out) == before {
			r.a.notUnderstood("a brace expansion with an empty alternative")
		}
		n++
	}
	return out
}

// zshOnlyRange reports {X..Y} with single characters X and Y that are not
// both digits nor both letters: text to bash, a range of characters to zsh.
func zshOnlyRange(v string) bool {
	for i := strings.Index(v, "{"); i >= 0 && i+5 < len(v); {
		if v[i+2:i+4] == ".." && v[i+5] == '}' {
			x, y := v[i+1], v[i+4]
			digits := x >= '0' && x <= '9' && y >= '0' && y <= '9'
			letters := isLetter(x) && isLetter(y)
			if !digits && !letters {
				return true
			}
		}
		n := strings.Index(v[i+1:], "{")
		if n < 0 {
			break
		}
		i += 1 + n
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 && strings.ContainsAny(l.Value, ",.") {
			return true
		}
	}
	return false
}

// braceAcrossParts reports an unquoted "{" and a later unquoted "}" in
// different parts of a word (`{""a,b}`, `{$e.env,x}`): bash may expand
// them as braces, which SplitBraces, reading literal parts alone, does not.
func braceAcrossParts(w *syntax.Word) bool {
	open := -1
	for i, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			continue
		}
		if open >= 0 && open < i && strings.IndexByte(l.Value, '}') >= 0 {
			return true
		}
		if j := strings.LastIndexByte(l.Value, '{'); j >= 0 && strings.IndexByte(l.Value[j:], '}') < 0 {
			open = i
		}
	}
	return false
}

// split appends the fields of one brace-free command word: a word made
// only of one unquoted variable with a known value is split on blanks and
// each piece globbed, as bash does; a word that expands to nothing unquoted
// is dropped.
func (r *resolver) split(w *syntax.Word, out []field) []field {
	if len(w.Parts) == 1 {
		if pe, ok := w.Parts[0].(*syntax.ParamExp); ok {
			if v, ok := r.known(pe); ok && !v.dyn {
				if strings.ContainsAny(v.s, " \t\n") {
					// zsh (an agent's shell may be zsh) does not split it.
					r.a.notUnderstood("an unquoted variable holding blanks (bash splits it into words, zsh does not)")
				}
				for _, piece := range strings.Fields(v.s) {
					out = append(out, litGlob(piece))
				}
				return out
			}
		}
	}
	f := r.single(w, ctxArgv)
	if f.s == "" && !f.quoted && !f.dyn {
		return out
	}
	return append(out, f)
}

// litGlob makes a field of text that bash will still glob (the value of an
// unquoted variable).
func litGlob(s string) field {
	if !strings.ContainsAny(s, "*?[") {
		return field{s: s}
	}
	return field{s: Dyn, pat: s, glob: true, dyn: true}
}

// single resolves a word to one field in context ctx.
func (r *resolver) single(w *syntax.Word, ctx wordCtx) field {
	if w == nil {
		return field{}
	}
	var f field
	// Substitutions walked while resolving may resolve words themselves:
	// they get buffers of their own.
	b := r.buf[:0]
	r.buf = nil
	var pat []byte
	on := mayGlob(w)
	if z := zshAfterParam(w.Parts); z != "" {
		r.a.notUnderstood(z)
	}
	for i, p := range w.Parts {
		r.patOn = on // a substitution inside may have resolved words of its own
		b, pat = r.part(b, pat, p, i == 0, ctx, &f)
	}
	f.s = string(b)
	f.dyn = strings.Contains(f.s, Dyn)
	if (ctx == ctxArgv || ctx == ctxNoSplit) && zshEquals(w) {
		f = dynField()
	}
	if len(w.Parts) == 1 {
		_, f.procsub = w.Parts[0].(*syntax.ProcSubst)
	}
	if f.glob && !f.expanded {
		f.pat = string(pat)
	} else if f.glob && !loneParam(w) {
		f.pat = "" // a loop variable's pattern inside a larger word
	}
	r.buf = b
	return f
}

// zshAfterParam names text right after a plain $name that zsh reads as
// part of it: a subscript (`$PWD[a]`, arithmetic that runs $(...)) or a
// modifier (`$x:l`, `$x:s^a^b^`): "" when there is none.
func zshAfterParam(parts []syntax.WordPart) string {
	for i, p := range parts {
		switch p := p.(type) {
		case *syntax.DblQuoted:
			if z := zshAfterParam(p.Parts); z != "" {
				return z
			}
		case *syntax.ParamExp:
			if !p.Short || i+1 >= len(parts) {
				continue
			}
			l, ok := parts[i+1].(*syntax.Lit)
			if !ok || l.Value == "" {
				continue
			}
			switch v := l.Value; {
			case v[0] == '[':
				return "`$name[`, a subscript to zsh (an agent's shell may be zsh)"
			case v[0] == ':' && len(v) > 1 && strings.IndexByte("aAcehlpPqQrsStuxgwWfF&", v[1]) >= 0:
				return "`$name" + v[:2] + "`, a modifier to zsh (an agent's shell may be zsh)"
			}
		}
	}
	return ""
}

// zshEquals reports a word zsh replaces by a program's path: one that
// starts with an unquoted "=" (`echo x >=ls` overwrote /usr/bin/ls under
// zsh, an agent's shell on macOS). A word of "=" alone is left alone; "=="
// and the like fail in zsh before anything runs.
func zshEquals(w *syntax.Word) bool {
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok || !strings.HasPrefix(l.Value, "=") {
		return false
	}
	return strings.Trim(l.Value, "=") != "" || len(w.Parts) > 1
}

// loneParam reports a word that is one parameter expansion, quoted or not.
func loneParam(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.ParamExp:
		return true
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 {
			_, ok := p.Parts[0].(*syntax.ParamExp)
			return ok
		}
	}
	return false
}

func appendDyn(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == 0 {
		return b // one Dyn stands for any run of run-time parts
	}
	return append(b, Dyn...)
}

// patLit appends literal text to the word's pathname pattern, escaped;
// nothing when the word cannot be a pattern.
func (r *resolver) patLit(pat []byte, s string) []byte {
	if !r.patOn {
		return pat
	}
	return appendPatLit(pat, s)
}

// patRaw appends pattern syntax to the word's pathname pattern.
func (r *resolver) patRaw(pat []byte, s string) []byte {
	if !r.patOn {
		return pat
	}
	return append(pat, s...)
}

// mayGlob reports a word that may be a pathname pattern: unquoted glob
// characters, or a variable (a loop variable over a pattern).
func mayGlob(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[") {
				return true
			}
		case *syntax.ParamExp:
			return true
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.ParamExp); ok {
					return true
				}
			}
		}
	}
	return false
}

// appendPatLit appends literal text to a pathname pattern, escaped.
func appendPatLit(pat []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[\`, s[i]) >= 0 {
			pat = append(pat, '\\')
		}
		pat = append(pat, s[i])
	}
	return pat
}

func (r *resolver) part(b, pat []byte, p syntax.WordPart, first bool, ctx wordCtx, f *field) ([]byte, []byte) {
	start := len(b)
	switch p := p.(type) {
	case *syntax.Lit:
		switch ctx {
		case ctxHeredoc:
			b = appendHeredocLit(b, p.Value)
		case ctxArgv:
			return r.unquotedLit(b, pat, p.Value, first, f)
		default:
			b = r.noSplitLit(b, p.Value, first, ctx)
		}
	case *syntax.SglQuoted:
		f.quoted = true
		if p.Dollar {
			if e := ansiCOther(p.Value); e != "" {
				r.a.notUnderstood("the escape " + e + " in $'...' (bash keeps an unknown escape's backslash, zsh drops it; \\c, \\u and \\U differ too)")
			}
			b = appendANSIC(b, p.Value)
		} else {
			b = append(b, p.Value...)
		}
	case *syntax.DblQuoted:
		f.quoted = true
		if p.Dollar {
			r.a.notUnderstood(`a $"..." locale string`)
		}
		for _, q := range p.Parts {
			switch q := q.(type) {
			case *syntax.Lit:
				b = appendDblQuotedLit(b, q.Value)
			case *syntax.ParamExp:
				b = r.param(b, q, true, f)
			default:
				b = r.subst(b, q, f)
			}
		}
	case *syntax.ParamExp:
		b = r.param(b, p, ctx == ctxHeredoc, f)
		f.split = f.split || ctx == ctxArgv
	case *syntax.ExtGlob:
		r.a.notUnderstood("an extended glob " + p.Op.String() + "(...)")
		f.glob, f.expanded = true, true
		b = appendDyn(b)
	default:
		b = r.subst(b, p, f)
		if _, arith := p.(*syntax.ArithmExp); !arith {
			f.split = f.split || ctx == ctxArgv
		}
	}
	return b, r.patLit(pat, string(b[start:]))
}

// subst walks a command, arithmetic or process substitution; its value is
// only known at run time.
func (r *resolver) subst(b []byte, p syntax.WordPart, f *field) []byte {
	a := r.a
	switch p := p.(type) {
	case *syntax.CmdSubst:
		if p.Backquotes && strings.ContainsAny(a.source(p), `'"`) {
			// bash ends `...` at the first unescaped backquote, quotes or
			// not; the parser honours quotes inside it.
			a.notUnderstood("quotes inside a `...` substitution")
		}
		a.inSubst++
		a.subshell(func() { a.stmts(p.Stmts) })
		a.inSubst--
	case *syntax.ProcSubst:
		a.inSubst++
		a.subshell(func() { a.stmts(p.Stmts) })
		a.inSubst--
	case *syntax.ArithmExp:
		if arithMayFail(a.source(p)) {
			a.mayAbort()
		}
		a.inWord++
		a.arith(p.X)
		a.inWord--
		f.numeric = true
	default:
		a.notUnderstood(fmt.Sprintf("a word part of kind %T", p))
	}
	f.expanded = true
	return appendDyn(b)
}

// known returns the value of a plain $NAME or ${NAME} whose value the line
// set, or HOME and PWD when they are known.
func (r *resolver) known(pe *syntax.ParamExp) (field, bool) {
	if !plainParam(pe) {
		return field{}, false
	}
	return r.a.lookup(pe.Param.Value)
}

func plainParam(pe *syntax.ParamExp) bool {
	return pe.Param != nil && !pe.Excl && !pe.Length && !pe.Width && pe.Index == nil && pe.Slice == nil &&
		pe.Repl == nil && pe.Exp == nil && pe.Names == 0 && pe.NestedParam == nil && len(pe.Modifiers) == 0
}

// lookup returns what the analyzer knows of a variable.
func (a *analyzer) lookup(name string) (field, bool) {
	if v, ok := a.st.vars[name]; ok {
		if a.contested(name) {
			return field{}, false
		}
		return v.f, !v.f.dyn || v.f.glob
	}
	switch name {
	case "HOME":
		if a.home != "" {
			return field{s: a.home}, true
		}
	case "PWD":
		if a.st.cwd != "" {
			return field{s: a.st.cwd}, true
		}
	}
	return field{}, false
}

// contested reports a variable the line gave two different values.
func (a *analyzer) contested(name string) bool {
	return a.st.hist != nil && a.st.hist.contested[name]
}

// numericVar reports a variable known to hold only an integer.
func (a *analyzer) numericVar(name string) bool {
	if v, ok := a.st.vars[name]; ok {
		if a.contested(name) {
			return v.numeric && a.st.hist.first[name].numeric
		}
		return v.numeric || !v.f.dyn && isArithLiteral(v.f.s)
	}
	switch name {
	case "#", "?", "$", "!", "RANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "EPOCHSECONDS":
		return true
	}
	return false
}

// param resolves a parameter expansion. Forms that evaluate text as code
// (indirection, ${x@P}) are not understood; subscripts, offsets and
// lengths are arithmetic and judged as such.
func (r *resolver) param(b []byte, pe *syntax.ParamExp, quoted bool, f *field) []byte {
	a := r.a
	f.expanded = true
	if pe.Excl {
		a.notUnderstood("indirect expansion ${!...}")
		return appendDyn(b)
	}
	if pe.NestedParam != nil || pe.Flags != nil || len(pe.Modifiers) > 0 || pe.Width || pe.IsSet {
		a.notUnderstood("a parameter expansion of another shell")
		return appendDyn(b)
	}
	if quoted && quotesInOperand(pe) {
		// Inside "..." or a here-document bash keeps the quotes of
		// "${x:-'...'}" as text and expands what is between them.
		a.notUnderstood("single quotes in a ${...} operand inside double quotes or a here-document")
		return appendDyn(b)
	}
	if pe.Index != nil {
		if w, ok := pe.Index.(*syntax.Word); !ok || !isAtOrStar(w) {
			a.arith(pe.Index)
		}
	}
	if pe.Slice != nil {
		a.mayAbort() // ${@:0:-1}: a bad offset or length
		a.arith(pe.Slice.Offset)
		a.arith(pe.Slice.Length)
	}
	if pe.Exp != nil && (pe.Exp.Op == syntax.ErrorUnset || pe.Exp.Op == syntax.ErrorUnsetOrNull) {
		a.mayAbort() // ${x:?msg}
	}
	if pe.Exp != nil && pe.Exp.Word != nil {
		if t := a.source(pe.Exp.Word); strings.Contains(t, "<(") || strings.Contains(t, ">(") || strings.Contains(t, "=(") {
			// The parser keeps <(...) there as text; bash runs it (and
			// zsh =(...)).
			a.notUnderstood("a process substitution inside ${...}")
		}
	}
	if pe.Repl != nil {
		r.single(pe.Repl.Orig, ctxPattern)
		r.single(pe.Repl.With, ctxNoSplit)
	}
	if pe.Exp != nil {
		switch pe.Exp.Op {
		case syntax.OtherParamOps:
			op := ""
			if pe.Exp.Word != nil {
				op = pe.Exp.Word.Lit()
			}
			switch op {
			case "Q", "E", "A", "a", "K", "k", "U", "u", "L":
			default:
				a.notUnderstood("the parameter transformation ${...@" + op + "}")
			}
		case syntax.AssignUnset, syntax.AssignUnsetOrNull:
			// bash expands a command's words before its redirections and
			// prefix assignments, which the analysis has judged already:
			// an assignment inside a word is not followed.
			a.notUnderstood("an assignment inside a word (${...=...})")
			if pe.Param != nil {
				if why := assignable(pe.Param.Value, false); why != "" {
					a.notUnderstood("${...=...} assigns " + why)
				}
				r.single(pe.Exp.Word, ctxNoSplit)
				a.st.setUnknown(pe.Param.Value)
			}
		default:
			ctx := ctxNoSplit
			switch pe.Exp.Op {
			case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
				ctx = ctxPattern
			}
			r.single(pe.Exp.Word, ctx)
		}
	}
	if pe.Length {
		f.numeric = true
		return appendDyn(b)
	}
	if pe.Param != nil && plainParam(pe) {
		if v, ok := a.lookup(pe.Param.Value); ok && !v.dyn {
			if !quoted && strings.ContainsAny(v.s, " \t\n*?[") {
				// Split or globbed where it stands in a larger word: not followed.
				return appendDyn(b)
			}
			return append(b, v.s...)
		} else if ok && v.glob && quoted {
			// A loop variable over names matching a pattern.
			f.glob, f.pat = true, v.pat
		}
		if a.numericVar(pe.Param.Value) {
			f.numeric = true
		}
	}
	return appendDyn(b)
}

// quotesInOperand reports single quotes anywhere in the words of pe's
// operator (${x:-w}, ${x/a/b}).
func quotesInOperand(pe *syntax.ParamExp) bool {
	found := false
	visit := func(n syntax.Node) bool {
		if _, ok := n.(*syntax.SglQuoted); ok {
			found = true
		}
		return !found
	}
	for _, w := range []*syntax.Word{expWord(pe), replWord(pe, true), replWord(pe, false)} {
		if w != nil {
			syntax.Walk(w, visit)
		}
	}
	return found
}

func expWord(pe *syntax.ParamExp) *syntax.Word {
	if pe.Exp == nil {
		return nil
	}
	return pe.Exp.Word
}

func replWord(pe *syntax.ParamExp, orig bool) *syntax.Word {
	switch {
	case pe.Repl == nil:
		return nil
	case orig:
		return pe.Repl.Orig
	}
	return pe.Repl.With
}

func isAtOrStar(w *syntax.Word) bool {
	l := w.Lit()
	return l == "@" || l == "*"
}

// unquotedLit resolves an unquoted literal of a command word: backslash
// escapes, a tilde prefix (first part only), and pathname patterns.
func (r *resolver) unquotedLit(b, pat []byte, v string, first bool, f *field) ([]byte, []byte) {
	i := 0
	if first && strings.HasPrefix(v, "~") {
		end := strings.IndexByte(v, '/')
		if end < 0 {
			end = len(v)
		}
		switch user := v[1:end]; {
		case user == "" && r.a.home != "":
			b = append(b, r.a.home...)
			pat = r.patLit(pat, r.a.home)
			i = end
		case user == "":
			// Home unknown: keep the ~ so the path is still flagged as outside.
		default: // ~user, ~+, ~-
			f.expanded = true
			b = appendDyn(b)
			i = end
		}
	}
	// bash also expands a tilde right after the first "=" of a word that
	// looks like an assignment (`dd if=~/.ssh/id_rsa`), and after a ":"
	// in its value.
	assign := -1
	if first {
		if eq := strings.IndexByte(v, '='); eq > 0 && validName(v[:eq]) {
			assign = eq
		}
	}
	for ; i < len(v); i++ {
		if assign >= 0 && i > assign && (v[i-1] == '=' && i-1 == assign || v[i-1] == ':') && v[i] == '~' {
			end := strings.IndexAny(v[i:], "/:")
			if end < 0 {
				end = len(v) - i
			}
			if user := v[i+1 : i+end]; user == "" && r.a.home != "" {
				b = append(b, r.a.home...)
				pat = r.patLit(pat, r.a.home)
				i += end - 1
				continue
			} else if user != "" {
				f.expanded = true
				b = appendDyn(b)
				i += end - 1
				continue
			}
		}
		switch c := v[i]; c {
		case '\\':
			if i+1 < len(v) {
				i++
				if v[i] == '\n' {
					continue
				}
				b = append(b, v[i])
				pat = r.patLit(pat, v[i:i+1])
			}
		case '*', '?':
			f.glob = true
			b = appendDyn(b)
			pat = r.patRaw(pat, v[i:i+1])
		case '[':
			if first && v == "[" {
				return append(b, '['), r.patRaw(pat, `\[`) // the test command
			}
			j := bracketEnd(v, i)
			if j < 0 {
				if strings.IndexByte(v[i:], ']') > 0 {
					// [v/] is text to bash (a / ends it) and a pattern
					// to zsh (cat .en[v/] reads .env).
					r.a.notUnderstood("a bracket holding a / (a pattern to zsh, text to bash)")
				}
				b = append(b, '[')
				pat = r.patRaw(pat, `\[`)
				continue
			}
			f.glob = true
			b = appendDyn(b)
			pat = r.patRaw(pat, v[i:j+1])
			i = j
		default:
			b = append(b, c)
			pat = r.patLit(pat, v[i:i+1])
		}
	}
	return b, pat
}

// bracketEnd returns the index of the `]` closing a bracket expression
// that starts at v[i], or -1 when bash would take the `[` literally.
func bracketEnd(v string, i int) int {
	j := i + 1
	if j < len(v) && (v[j] == '!' || v[j] == '^') {
		j++
	}
	if j < len(v) && v[j] == ']' {
		j++
	}
	for ; j < len(v); j++ {
		switch v[j] {
		case ']':
			return j
		case '\\':
			j++
		case '/':
			return -1
		}
	}
	return -1
}

// noSplitLit resolves an unquoted literal where bash neither splits nor
// globs (assignment values, [[ ]] operands, case words).
func (r *resolver) noSplitLit(b []byte, v string, first bool, ctx wordCtx) []byte {
	i := 0
	if first && ctx == ctxNoSplit && strings.HasPrefix(v, "~") {
		end := strings.IndexByte(v, '/')
		if end < 0 {
			end = len(v)
		}
		if v[1:end] == "" && r.a.home != "" {
			b = append(b, r.a.home...)
			i = end
		} else if v[1:end] != "" {
			b = appendDyn(b)
			i = end
		}
	}
	for ; i < len(v); i++ {
		c := v[i]
		if c == ':' && ctx == ctxNoSplit && i+1 < len(v) && (v[i+1] == '~' || v[i+1] == '=') {
			// bash expands a tilde after ":" in an assignment value, zsh
			// also a program's path after ":=": its text is not followed
			// here.
			b = append(b, ':')
			b = appendDyn(b)
			i++
			continue
		}
		if c == '\\' && i+1 < len(v) {
			i++
			if v[i] == '\n' {
				continue
			}
			if ctx == ctxPattern {
				b = append(b, '\\')
			}
			b = append(b, v[i])
			continue
		}
		b = append(b, c)
	}
	return b
}

// appendHeredocLit resolves an unquoted heredoc's literal text: a
// backslash escapes only $, `, \ and newline.
func appendHeredocLit(b []byte, v string) []byte { return appendEscapedLit(b, v, "$`\\") }

// appendDblQuotedLit resolves the escapes that are special inside double
// quotes; any other backslash stays.
func appendDblQuotedLit(b []byte, v string) []byte { return appendEscapedLit(b, v, "$`\"\\") }

// appendEscapedLit resolves backslash escapes of the bytes in escapable and
// of newline (a line continuation); any other backslash stays.
func appendEscapedLit(b []byte, v, escapable string) []byte {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			switch {
			case strings.IndexByte(escapable, v[i+1]) >= 0:
				i++
				b = append(b, v[i])
				continue
			case v[i+1] == '\n':
				i++
				continue
			}
		}
		b = append(b, c)
	}
	return b
}

// appendANSIC decodes a $'...' string. Decoded control characters other than
// newline and tab become Dyn, so a decoded NUL can never forge Dyn and a
// decoded \r can never hide text.
// ansiCOther returns the first escape in the text of $'...' that bash and
// zsh read differently, "" when there is none.
func ansiCOther(v string) string {
	for i := 0; i+1 < len(v); i++ {
		if v[i] != '\\' {
			continue
		}
		i++
		switch e := v[i]; {
		case strings.IndexByte("abeEfnrtv\\'\"01234567", e) >= 0:
		case e == 'x' && i+1 < len(v) && isHex(v[i+1]):
		default:
			return "\\" + string(e)
		}
	}
	return ""
}

func appendANSIC(b []byte, v string) []byte {
	put := func(r rune) {
		switch {
		case r == '\n' || r == '\t':
			b = append(b, byte(r))
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			b = appendDyn(b)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				b = appendDyn(b)
			} else {
				b = append(b, c)
			}
			continue
		}
		i++
		switch e := v[i]; e {
		case 'a':
			put(7)
		case 'b':
			put(8)
		case 'e', 'E':
			put(0x1b)
		case 'f':
			put(0xc)
		case 'n':
			put('\n')
		case 'r':
			put('\r')
		case 't':
			put('\t')
		case 'v':
			put(0xb)
		case '\\', '\'', '"', '?':
			b = append(b, e)
		case 'c':
			if i+1 < len(v) {
				i++
				put(rune(v[i] & 0x1f))
			} else {
				b = append(b, '\\', 'c')
			}
		case 'x', 'u', 'U':
			if e == 'x' && i+1 < len(v) && v[i+1] == '{' {
				// bash 5.2's \x{HHH...}: not modelled, so not known.
				b = appendDyn(b)
				if j := strings.IndexByte(v[i:], '}'); j >= 0 {
					i += j
				} else {
					i = len(v)
				}
				continue
			}
			max := 2
			if e == 'u' {
				max = 4
			} else if e == 'U' {
				max = 8
			}
			j := i + 1
			for j < len(v) && j-i-1 < max && isHex(v[j]) {
				j++
			}
			if j == i+1 {
				b = append(b, '\\', e)
				continue
			}
			n, _ := strconv.ParseUint(v[i+1:j], 16, 32)
			i = j - 1
			if e == 'x' {
				if n >= 0x80 {
					b = appendDyn(b) // a raw byte: not text we can show
				} else {
					put(rune(n))
				}
			} else if n > utf8.MaxRune {
				b = appendDyn(b)
			} else {
				put(rune(n))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(v) && j-i < 3 && v[j] >= '0' && v[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(v[i:j], 8, 32)
			i = j - 1
			if n >= 0x80 {
				b = appendDyn(b)
			} else {
				put(rune(n))
			}
		default:
			b = append(b, '\\', e)
		}
	}
	return b
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// bareByte reports whether c may appear in a word left unquoted in Text.
func bareByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	// Braces are bare too: Text is only matched, never run, and a literal
	// brace in a rule is written \{ (glob.QuoteMeta), as in corpus O18.
	return strings.IndexByte("_@%+=:,./{}-\x00", c) >= 0
}

// Quote renders one resolved word the way Text does: bare when it is made only
// of [A-Za-z0-9_@%+=:,./{}-] and Dyn, else single-quoted with ' written as '\”;
// the empty word is ”.
func Quote(word string) string {
	if word != "" && isBare(word) {
		return word
	}
	return string(appendQuoted(nil, word))
}

func isBare(s string) bool {
	for i := 0; i < len(s); i++ {
		if !bareByte(s[i]) {
			return false
		}
	}
	return true
}

func appendQuoted(b []byte, s string) []byte {
	if s != "" && isBare(s) {
		return append(b, s...)
	}
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, `'\''`...)
		} else {
			b = append(b, s[i])
		}
	}
	return append(b, '\'')
}

// joinQuoted renders argv as Text.
func joinQuoted(argv []string) string {
	n := 0
	for _, a := range argv {
		n += len(a) + 3
	}
	b := make([]byte, 0, n)
	for i, a := range argv {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendQuoted(b, a)
	}
	return string(b)
}

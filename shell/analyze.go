package shell

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

const (
	// maxDepth bounds the nesting of command lines parsed from wrapper
	// payloads (bash -c, eval, env -S, ...); deeper payloads are Dynamic.
	maxDepth = 8
	// maxBlankRun is the longest run of blanks accepted before the line is
	// Unsafe: long padding pushes a tail out of sight in approval prompts.
	maxBlankRun = 40
)

// Analyze decomposes the bash command line src into the simple commands it
// would run, the files its redirections write and the files it reads, and
// whatever it does not understand. It never fails: what it cannot
// understand is reported through Analysis.Unsafe or Command.Dynamic, so the
// gate asks. It never panics.
func Analyze(src string, opts Options) (an *Analysis) {
	an = &Analysis{Commands: make([]Command, 0, 4)}
	defer func() {
		if r := recover(); r != nil {
			// Fail closed, keeping whatever was found so deny rules still apply.
			an.Unsafe = fmt.Sprintf("shell analysis failed: %v", r)
		}
	}()
	home := strings.TrimSuffix(opts.Home, "/")
	if opts.Home == "/" {
		home = "/"
	}
	if home != "" && !path.IsAbs(home) {
		home = ""
	}
	cwd := opts.Cwd
	if cwd != "" {
		if path.IsAbs(cwd) {
			cwd = path.Clean(cwd)
		} else {
			cwd = ""
		}
	}
	a := &analyzer{opts: opts, an: an, home: home}
	a.st = &state{cwd: cwd, hist: &varHistory{}}
	a.res = resolver{a: a}
	if why := unsafeText(src); why != "" {
		a.unsafe(why)
	}
	a.script(src, "", 0)
	return an
}

// analyzer accumulates one Analysis.
type analyzer struct {
	opts Options
	an   *Analysis
	home string
	st   *state
	res  resolver
	// inWord counts arithmetic expansions being resolved inside a word.
	inWord int
	// inSubst counts the $(...), `...` and <(...) being walked.
	inSubst int
	// outside de-duplicates OutsidePaths in linear time.
	outside map[string]bool
	// src is the text of the script being walked, for Source.
	src     string
	wrapper string
	depth   int
	// aborted is the state when an expansion that may fail was met on
	// the line being walked: bash then skips the rest of the line, so
	// what follows on it may not happen (nil when none was).
	aborted *state
	// exits holds, per loop being walked (innermost last), the states in
	// which it may end: after a while or until condition, at a break or
	// continue.
	exits [][]*state
}

// state is the shell state the line itself sets up, as far as it is known.
type state struct {
	cwd  string // "" when unknown
	dirs []string
	vars map[string]value
	// hist is shared by every copy of the state the line walks: what
	// each variable was first given, and which were given another value
	// since (anywhere: in a loop, a subshell, a branch).
	hist *varHistory
}

// varHistory: a variable the line gives two different values is only
// known at run time after the second. Which assignment bash really made
// last (one may be skipped by a break, an expansion error, a failed
// redirection, a pipeline's last command that zsh runs in this shell)
// is where the analysis and bash have differed most.
type varHistory struct {
	first     map[string]value
	contested map[string]bool
}

func (h *varHistory) note(name string, v value) {
	if h.first == nil {
		h.first = map[string]value{}
	}
	if f, ok := h.first[name]; !ok {
		h.first[name] = v
	} else if f != v {
		if h.contested == nil {
			h.contested = map[string]bool{}
		}
		h.contested[name] = true
	}
}

// value is what a shell variable holds.
type value struct {
	f       field // the text; f.dyn when only known at run time
	numeric bool  // only ever an integer (set by arithmetic)
}

func (s *state) clone() *state {
	c := s.copy()
	return &c
}

// copy returns a deep copy of s by value (no allocation when s holds no
// variables or directory stack).
func (s *state) copy() state {
	c := state{cwd: s.cwd, hist: s.hist}
	if len(s.dirs) > 0 {
		c.dirs = append([]string(nil), s.dirs...)
	}
	if len(s.vars) > 0 {
		c.vars = make(map[string]value, len(s.vars))
		for k, v := range s.vars {
			c.vars[k] = v
		}
	}
	return c
}

// same reports whether two states agree on everything tracked.
func (s *state) same(o *state) bool {
	if s.cwd != o.cwd || len(s.dirs) != len(o.dirs) || len(s.vars) != len(o.vars) {
		return false
	}
	for i := range s.dirs {
		if s.dirs[i] != o.dirs[i] {
			return false
		}
	}
	for k, v := range s.vars {
		if w, ok := o.vars[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// merge makes s what is known after either s or o: whatever differs is unknown.
func (s *state) merge(o *state) {
	if s.cwd != o.cwd {
		s.cwd = ""
	}
	if len(s.dirs) != len(o.dirs) {
		s.dirs = nil
	}
	// (Not an assignment: the history is left as it is.)
	unknown := value{f: dynField()}
	for k, v := range o.vars {
		if w, ok := s.vars[k]; !ok || w != v {
			if s.vars == nil {
				s.vars = make(map[string]value, 4)
			}
			s.vars[k] = unknown
		}
	}
	for k := range s.vars {
		if _, ok := o.vars[k]; !ok {
			s.vars[k] = unknown
		}
	}
}

func (s *state) set(name string, v value) {
	if s.vars == nil {
		s.vars = make(map[string]value, 4)
	}
	if s.hist != nil {
		s.hist.note(name, v)
	}
	s.vars[name] = v
}

func (s *state) setUnknown(name string) {
	s.set(name, value{f: dynField()})
}

func (a *analyzer) unsafe(why string) {
	if a.an.Unsafe == "" {
		a.an.Unsafe = why
	}
}

// notUnderstood marks the whole line as asking because of a shell feature
// the analyzer does not model.
func (a *analyzer) notUnderstood(what string) {
	a.unsafe("not understood: " + what)
}

// unsafeText reports why src cannot be shown or parsed faithfully: control
// characters (bash and mvdan/sh disagree on \r, and a NUL would forge Dyn),
// invisible or bidi Unicode, invalid UTF-8, and long blank runs.
func unsafeText(src string) string {
	if z := zshOnly(src); z != "" {
		return z
	}
	blanks := 0
	for i, r := range src {
		if r == ' ' || r == '\t' {
			blanks++
			if blanks > maxBlankRun {
				return fmt.Sprintf("a run of more than %d blanks at byte %d", maxBlankRun, i)
			}
			continue
		}
		blanks = 0
		switch {
		case r == '\n':
		case r < 0x20 || r == 0x7f:
			return fmt.Sprintf("control character %U at byte %d", r, i)
		case r < 0x80:
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(src[i:]); n <= 1 {
				return fmt.Sprintf("invalid UTF-8 at byte %d", i)
			}
			return fmt.Sprintf("a replacement character (U+FFFD, often invalid bytes) at byte %d", i)
		case invisible(r):
			return fmt.Sprintf("invisible or bidi character %U at byte %d", r, i)
		}
	}
	return ""
}

// zshOnly names text that zsh reads other than bash: agents run their
// shell tool in the user's shell, which is zsh on macOS (Claude Code's
// Bash tool) or may be (Codex's shell argument, not in its hook). `>!`,
// `>>!`, `&>!` write their target like `>|` (bash writes a file named !);
// `$~x`, `$=x`, `$^x` expand x (bash keeps them as text). Anywhere in the
// text, quoted or not: reading it as bash would not tell.
func zshOnly(src string) string {
	for _, z := range [...]string{">!", ">&!", "&>!", "$~", "$=", "$^"} {
		if strings.Contains(src, z) {
			return "`" + z + "`, which zsh reads differently from bash (an agent's shell may be zsh)"
		}
	}
	// $#name, $+name (zsh: a length, whether it is set, with a subscript
	// that runs $(...)); $# then text to bash.
	for _, pre := range [...]string{"$#", "$+"} {
		for i := strings.Index(src, pre); i >= 0; {
			if j := i + 2; j < len(src) && (validName(src[j:j+1]) || strings.IndexByte("[*@", src[j]) >= 0) {
				return "`" + src[i:j+1] + "`, a length or a test to zsh (an agent's shell may be zsh)"
			}
			n := strings.Index(src[i+2:], pre)
			if n < 0 {
				break
			}
			i += 2 + n
		}
	}
	// <N-M>, <N->, <-M>, <->: a numeric-range glob in zsh, redirections
	// in bash (sed <0-9>e\ x: zsh passes a file named 1e x to sed).
	for i := strings.IndexByte(src, '<'); i >= 0; {
		j := i + 1
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
		if j < len(src) && src[j] == '-' {
			k := j + 1
			for k < len(src) && src[k] >= '0' && src[k] <= '9' {
				k++
			}
			if k < len(src) && src[k] == '>' {
				return "`" + src[i:k+1] + "`, a numeric-range glob to zsh and redirections to bash (an agent's shell may be zsh)"
			}
		}
		n := strings.IndexByte(src[i+1:], '<')
		if n < 0 {
			break
		}
		i += 1 + n
	}
	return ""
}

// invisible reports runes that render as nothing, as a space, or reorder
// text: format characters (zero-width, bidi, tags, soft hyphen), C1
// controls, separators other than the ASCII space, fillers and variation
// selectors.
func invisible(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zs, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return true
	case r == 0x180e, r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0, r == 0x2800:
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0000 && r <= 0xe0fff:
		return true
	case unicode.Is(unicode.Co, r), unicode.Is(unicode.Cs, r), r == 0xfffd:
		return true
	}
	return false
}

// script parses one command line (the input, or a wrapper's payload) and
// walks it in the current state. wrapper labels the commands found.
func (a *analyzer) script(src, wrapper string, depth int) {
	// Comments are kept only to find the ones bash reads differently.
	hasHash := strings.IndexByte(src, '#') >= 0
	p := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(hasHash))
	f, err := p.Parse(strings.NewReader(src), "")
	if err != nil {
		if wrapper != "" {
			a.unsafe(fmt.Sprintf("cannot parse the %s payload: %v", wrapper, err))
		} else {
			a.unsafe(fmt.Sprintf("cannot parse: %v", err))
		}
		return
	}
	if hasHash {
		if why := parserDisagreement(f, src); why != "" {
			a.unsafe(why)
		}
	}
	if why := continuationInWord(src); why != "" {
		a.notUnderstood(why)
	}
	saved := a.src
	savedW, savedD := a.wrapper, a.depth
	a.src, a.wrapper, a.depth = src, wrapper, depth
	a.lines(f.Stmts)
	a.src, a.wrapper, a.depth = saved, savedW, savedD
}

// lines walks a script's statements line by line, as bash reads them: an
// expansion error ($((1/0)), ${x:?}) skips the rest of its line, so the
// state it met may be the one the next line starts from.
func (a *analyzer) lines(ss []*syntax.Stmt) {
	savedAbort := a.aborted
	a.aborted = nil
	end := uint(0)
	for i := 0; i < len(ss); {
		j := i + 1
		end = ss[i].End().Line()
		for j < len(ss) && ss[j].Pos().Line() <= end {
			if e := ss[j].End().Line(); e > end {
				end = e
			}
			j++
		}
		a.stmtsThen(ss[i:j], j < len(ss))
		if a.aborted != nil {
			a.st.merge(a.aborted)
			a.aborted = nil
		}
		i = j
	}
	a.aborted = savedAbort
}

// mayAbort notes an expansion that may fail on the line being walked.
func (a *analyzer) mayAbort() {
	switch {
	case a.inSubst > 0:
	case a.aborted == nil:
		a.aborted = a.st.clone()
	default:
		a.aborted.merge(a.st) // any of them may be where the line stops
	}
}

// arithMayFail reports arithmetic text whose evaluation may be an error:
// a division, a remainder, a power, a base (2#2), or a number with a
// leading 0 (08 is not octal).
func arithMayFail(text string) bool {
	if strings.ContainsAny(text, "/%#") || strings.Contains(text, "**") {
		return true
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return true // a variable's value (08, 2#5) may be an error
		}
	}
	for i := 0; i+1 < len(text); i++ {
		if text[i] == '0' && text[i+1] >= '0' && text[i+1] <= '9' && (i == 0 || !validName(text[i-1:i]) && (text[i-1] < '0' || text[i-1] > '9')) {
			return true
		}
	}
	return false
}

// parserDisagreement reports text that mvdan/sh and bash read differently.
func parserDisagreement(f *syntax.File, src string) string {
	bad := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		if bad != "" {
			return false
		}
		if c, ok := n.(*syntax.Comment); ok {
			// bash ends a comment at the newline even after a backslash;
			// mvdan/sh joins the next line into the comment.
			if strings.HasSuffix(c.Text, "\\") || strings.Contains(c.Text, "\\\n") || strings.Contains(c.Text, "\n") {
				bad = "a comment ending in a backslash (bash and the parser disagree on the next line)"
			}
		}
		return true
	})
	if bad != "" {
		return bad
	}
	// A backslash-newline right after '#' in a word position is the same
	// disagreement seen from the other side.
	if strings.Contains(src, "#\\\n") {
		return "a comment ending in a backslash (bash and the parser disagree on the next line)"
	}
	return ""
}

// continuationInWord reports a backslash-newline that does not follow a
// blank. bash removes it before anything else, so it can join "$" and "("
// into "$(" or "E" and "OF" into a here-document's end, or make "$'...'"
// of "$" and "'...'"; the parser keeps the parts apart. Between words
// (after a blank) it is the usual line continuation and reads the same.
func continuationInWord(src string) string {
	for i := strings.Index(src, "\\\n"); i >= 0; {
		run := 0
		for j := i; j >= 0 && src[j] == '\\'; j-- {
			run++
		}
		if run%2 == 1 {
			start := i - run + 1
			if start == 0 || (src[start-1] != ' ' && src[start-1] != '\t') {
				return "a backslash-newline inside a word (bash joins the lines before it parses)"
			}
		}
		next := strings.Index(src[i+2:], "\\\n")
		if next < 0 {
			break
		}
		i += 2 + next
	}
	return ""
}

// source returns the text of n as written, "" when its positions are not
// usable.
func (a *analyzer) source(n syntax.Node) string {
	s, e := n.Pos().Offset(), n.End().Offset()
	if !n.Pos().IsValid() || !n.End().IsValid() || s > e || e > uint(len(a.src)) {
		return ""
	}
	return a.src[s:e]
}

// stmts walks a list. A `cd` that fails leaves the directory as it was,
// and the next statement of a list runs either way: after a statement that
// moved the directory, the directory is unknown (`cd x && ...` is exact).
func (a *analyzer) stmts(ss []*syntax.Stmt) { a.stmtsThen(ss, false) }

// stmtsThen walks a list of statements; more says others follow it.
func (a *analyzer) stmtsThen(ss []*syntax.Stmt, more bool) {
	for i, s := range ss {
		before, dirs := a.st.cwd, a.st.dirs
		a.stmt(s, stdinNone)
		if (more || i < len(ss)-1) && (a.st.cwd != before || !slices.Equal(a.st.dirs, dirs)) {
			// A pushd that failed left the stack as it was, too.
			a.st.cwd, a.st.dirs = "", nil
		}
	}
}

// stdinKind says where a command's standard input comes from, for shells
// that would read a script from it.
type stdinKind int

const (
	stdinNone stdinKind = iota // inherited (the agent's, usually empty)
	stdinPipe                  // a pipe from an earlier command
)

// stmt walks one statement: redirections first (bash opens them before the
// command runs, in the directory it runs in), then the command.
func (a *analyzer) stmt(s *syntax.Stmt, in stdinKind) {
	if s == nil {
		return
	}
	if s.Coprocess {
		a.notUnderstood("coproc")
	}
	if s.Background {
		// A background job cannot change this shell's state.
		saved := a.st
		a.st = saved.clone()
		defer func() { a.st = saved }()
	} else if s.Negated {
		// `! cd x` succeeds when cd failed: its changes may not hold.
		defer a.mayNotHold()()
	}
	if len(s.Redirs) > 0 {
		if !redirsCannotFail(s.Redirs) {
			// A redirection that fails (a missing file, a directory, a
			// closed fd) skips the command: its changes may not happen.
			defer a.mayNotHold()()
		}
		if ce, ok := s.Cmd.(*syntax.CallExpr); ok && len(ce.Args) == 0 && len(ce.Assigns) > 0 {
			a.assignThenRedirect(ce, s.Redirs, in)
			return
		}
	}
	var script *stdinScript
	mark := len(a.an.Reads)
	for _, r := range s.Redirs {
		if sc := a.redirect(r); sc != nil {
			script = sc
		}
	}
	if s.Cmd == nil {
		// `$(< FILE)`: bash reads FILE as the value, with no command whose
		// rules could have meant it.
		for i := mark; i < len(a.an.Reads); i++ {
			a.an.Reads[i].By = "$(< file)"
		}
	}
	if s.Cmd == nil {
		return
	}
	a.command(s.Cmd, in, script)
}

// mayNotHold returns what, deferred, makes the state after a command one
// where the command's changes may not have happened. (Apart from stmt, so
// that the frames of its deep recursion stay small.)
func (a *analyzer) mayNotHold() func() {
	pre := a.st.clone()
	return func() { a.st.merge(pre) }
}

// assignThenRedirect walks a command of assignments alone: bash assigns
// first and then opens the redirections, whose words see the new values
// (x=F >$x).
func (a *analyzer) assignThenRedirect(ce *syntax.CallExpr, redirs []*syntax.Redirect, in stdinKind) {
	a.call(ce, in, nil)
	for _, r := range redirs {
		a.redirect(r)
	}
}

// redirsCannotFail reports redirections that open nothing that may be
// missing: /dev/null, the standard descriptors duplicated, here-documents
// and here-strings.
func redirsCannotFail(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			continue
		case syntax.DplOut, syntax.DplIn:
			if l := r.Word.Lit(); l == "1" || l == "2" || l == "0" || l == "-" {
				continue
			}
		default:
			if r.Word.Lit() == "/dev/null" {
				continue
			}
		}
		return false
	}
	return true
}

// stdinScript is a literal script a command gets on its standard input from
// a heredoc or here-string.
type stdinScript struct {
	text    string
	literal bool
}

// command walks one command node. Anything not modelled here is not
// understood, so the whole line asks.
func (a *analyzer) command(c syntax.Command, in stdinKind, script *stdinScript) {
	switch c := c.(type) {
	case *syntax.CallExpr:
		a.call(c, in, script)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			// Y runs only when X succeeded: X's changes hold for it.
			a.stmt(c.X, in)
			a.branch(func() { a.stmt(c.Y, stdinNone) })
		case syntax.OrStmt:
			// Y runs when X failed (a cd that did not happen), and after
			// the list X may or may not have succeeded.
			a.orList(c, in)
		case syntax.Pipe, syntax.PipeAll:
			a.pipeline(c, in)
		default:
			a.notUnderstood("operator " + c.Op.String())
		}
	case *syntax.Block:
		a.stmts(c.Stmts)
	case *syntax.Subshell:
		a.subshell(func() { a.stmts(c.Stmts) })
	case *syntax.IfClause:
		a.ifClause(c)
	case *syntax.WhileClause:
		a.loop(func() {
			pre := a.st.copy()
			a.stmts(c.Cond)
			a.loopExit(false) // the loop ends after its condition
			if c.Until {
				// until's body runs when the condition failed: its
				// changes (a cd) may not have happened.
				a.st.merge(&pre)
			}
			a.stmts(c.Do)
		})
	case *syntax.ForClause:
		a.forClause(c)
	case *syntax.CaseClause:
		a.caseClause(c)
	case *syntax.ArithmCmd:
		a.arith(c.X)
	case *syntax.LetClause:
		if strings.ContainsAny(a.source(c), "|&<>;") {
			// The parser reads let's words as one arithmetic expression;
			// bash reads | & < > ; there as pipes and redirections (let
			// y=1|bash x runs bash).
			a.notUnderstood("let with | & < > or ; (bash reads them as a pipeline or redirection)")
		}
		for _, x := range c.Exprs {
			a.arith(x)
		}
	case *syntax.TestClause:
		a.test(c.X)
	case *syntax.DeclClause:
		a.declClause(c)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			a.stmt(c.Stmt, in)
		}
	case *syntax.FuncDecl:
		name := "" // the parser takes `()0` for one with no name
		if c.Name != nil {
			name = c.Name.Value
		}
		a.notUnderstood("a function definition (" + name + ")")
	case *syntax.CoprocClause:
		a.notUnderstood("coproc")
	default:
		a.notUnderstood(fmt.Sprintf("shell construct %T", c))
	}
}

// subshell runs fn in a copy of the state, which is dropped after.
func (a *analyzer) subshell(fn func()) {
	saved := a.st
	a.st = saved.clone()
	fn()
	a.st = saved
}

// branch runs fn, which may or may not run: what it changes is unknown after.
func (a *analyzer) branch(fn func()) {
	before := a.st.copy()
	fn()
	a.st.merge(&before)
}

// loop runs a loop body, which may run any number of times: if one pass
// changes the state, it is walked again from the merged (partly unknown)
// state, so the second pass sees what the first one left.
func (a *analyzer) loop(fn func()) {
	a.exits = append(a.exits, nil)
	defer func() {
		// The loop may end in any state it may leave in.
		for _, e := range a.exits[len(a.exits)-1] {
			a.st.merge(e)
		}
		a.exits = a.exits[:len(a.exits)-1]
	}()
	mark := len(a.an.Commands)
	marks := [3]int{len(a.an.Writes), len(a.an.Reads), len(a.an.Network)}
	// Walk the body again from the merged state until a pass changes
	// nothing: each iteration sees what the earlier ones left, however
	// long a chain of assignments takes to reach it.
	for pass := 0; ; pass++ {
		start := a.st.clone()
		fn()
		if a.st.same(start) {
			return
		}
		a.st.merge(start)
		if a.st.same(start) {
			return
		}
		if pass == 8 {
			a.notUnderstood("a loop whose shell state does not settle")
			return
		}
		a.an.Commands = a.an.Commands[:mark]
		a.an.Writes, a.an.Reads, a.an.Network = a.an.Writes[:marks[0]], a.an.Reads[:marks[1]], a.an.Network[:marks[2]]
	}
}

// orList walks X || Y.
func (a *analyzer) orList(c *syntax.BinaryCmd, in stdinKind) {
	restore := a.mayNotHold()
	a.stmt(c.X, in)
	restore()
	a.branch(func() { a.stmt(c.Y, stdinNone) })
}

// pipeline walks X | Y: X in a subshell; Y in a subshell to bash and in
// this shell to zsh (echo x | read v; true | cd ~), so its changes may
// hold.
func (a *analyzer) pipeline(c *syntax.BinaryCmd, in stdinKind) {
	if c.Y != nil {
		if _, ok := c.Y.Cmd.(*syntax.TimeClause); ok {
			// bash reads `time` as the keyword only at the start of a
			// pipeline; after a pipe it is a command.
			a.notUnderstood("`time` after a pipe")
		}
	}
	a.subshell(func() { a.stmt(c.X, in) })
	restore := a.mayNotHold()
	a.stmt(c.Y, stdinPipe)
	restore()
}

// loopExit records the current state as one the innermost loop (with all,
// every loop: break 2) may end in.
func (a *analyzer) loopExit(all bool) {
	for i := len(a.exits) - 1; i >= 0; i-- {
		a.exits[i] = append(a.exits[i], a.st.clone())
		if !all {
			return
		}
	}
}

func (a *analyzer) ifClause(c *syntax.IfClause) {
	pre := a.st.copy()
	a.stmts(c.Cond)
	// The then branch runs when the condition succeeded; the else branch
	// when it failed, so its changes (a cd) may not have happened.
	before := a.st.clone()
	before.merge(&pre)
	a.stmts(c.Then)
	after := a.st
	a.st = before
	if c.Else != nil {
		if len(c.Else.Cond) == 0 {
			a.stmts(c.Else.Then)
		} else {
			a.ifClause(c.Else)
		}
	}
	a.st.merge(after)
}

func (a *analyzer) forClause(c *syntax.ForClause) {
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		var items []field
		if l.InPos.IsValid() {
			items = a.res.argv(l.Items, nil)
		} else {
			items = []field{dynField()} // "$@"
		}
		name := l.Name.Value
		if why := assignable(name, false); why != "" {
			a.notUnderstood("for loop variable " + why)
		}
		v := dynField()
		switch {
		case c.Select:
			// select sets the name to "" on a reply that is not a number
			// (`select d in sub; do cd $d` went home), and REPLY to the
			// reply.
		case len(items) == 1 && !items[0].glob:
			v = items[0]
		case allSameGlob(items):
			v = items[0]
			v.quoted = true
		}
		a.loop(func() {
			if c.Select {
				a.st.set("REPLY", value{f: dynField()})
			}
			a.st.set(name, value{f: v})
			a.stmts(c.Do)
		})
	case *syntax.CStyleLoop:
		a.arith(l.Init)
		a.loop(func() {
			a.arith(l.Cond)
			a.loopExit(false)
			a.stmts(c.Do)
			a.arith(l.Post)
		})
	default:
		a.notUnderstood("a for loop of this form")
	}
}

// allSameGlob reports one glob word (`for f in *.go`): each value is a
// name matching it.
func allSameGlob(fs []field) bool {
	return len(fs) == 1 && fs[0].glob && fs[0].pat != ""
}

func (a *analyzer) caseClause(c *syntax.CaseClause) {
	a.res.single(c.Word, ctxNoSplit)
	before := a.st.clone()
	var merged *state
	for _, it := range c.Items {
		if it.Op != syntax.Break {
			// ;& and ;;& carry one item's state into the next body.
			a.notUnderstood("a case item ending in " + it.Op.String())
		}
		a.st = before.clone()
		for _, p := range it.Patterns {
			a.res.single(p, ctxPattern)
		}
		a.stmts(it.Stmts)
		if merged == nil {
			merged = a.st
		} else {
			merged.merge(a.st)
		}
	}
	if merged == nil {
		a.st = before
		return
	}
	merged.merge(before)
	a.st = merged
}

// redirect records what one redirection reads or writes, and returns the
// literal script a heredoc or here-string feeds the command, if any.
func (a *analyzer) redirect(r *syntax.Redirect) *stdinScript {
	if r.N != nil && !isDigits(r.N.Value) {
		// {var}>file allocates an fd into a variable (a subscript in it is
		// arithmetic).
		a.notUnderstood("a redirection that allocates a file descriptor ({" + r.N.Value + "})")
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if a.inSubst > 0 {
			// bash also ends a here-document inside $(...) at a line
			// like "EOF)", where the parser reads on.
			a.notUnderstood("a here-document inside a command or process substitution")
		}
		if !plainDelim(r.Word) {
			// bash decodes <<$'E\x41' to EA; the parser ends the body at
			// the text E\x41.
			a.notUnderstood("a here-document delimiter with $'...', $\"...\" or an expansion")
		}
		if r.Hdoc == nil {
			return &stdinScript{literal: true}
		}
		if !quotedDelim(r.Word) && a.bodyHasDelimLine(r) {
			// A $( ... ) in the body spans a line that is the delimiter:
			// bash ends the body at that line, the parser reads on.
			a.notUnderstood("a here-document body with its end line inside an expansion")
		}
		if quotedDelim(r.Word) {
			// <<'EOF': the body is taken as written, no escapes.
			var b strings.Builder
			for _, p := range r.Hdoc.Parts {
				if l, ok := p.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				} else {
					return &stdinScript{}
				}
			}
			return &stdinScript{text: b.String(), literal: true}
		}
		f := a.res.single(r.Hdoc, ctxHeredoc)
		return &stdinScript{text: f.s, literal: !f.dyn}
	case syntax.WordHdoc:
		f := a.res.single(r.Word, ctxNoSplit)
		return &stdinScript{text: f.s, literal: !f.dyn}
	}
	if r.Word == nil {
		return nil
	}
	fs := a.res.argv([]*syntax.Word{r.Word}, nil)
	var t field
	switch len(fs) {
	case 1:
		t = fs[0]
	default:
		t = dynField() // bash: ambiguous redirect, or a glob's single match
	}
	if t.glob {
		t = dynField()
	}
	switch r.Op {
	case syntax.DplOut, syntax.DplIn:
		if !t.dyn && (t.s == "-" || isDigits(t.s)) {
			return nil // >&2, <&0, >&-: fd duplication
		}
		if r.Op == syntax.DplIn {
			a.readRedirect(t)
			return nil
		}
	case syntax.RdrIn:
		a.readRedirect(t)
		return nil
	case syntax.RdrInOut:
		a.readRedirect(t)
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
	default:
		a.notUnderstood("redirection " + r.Op.String())
		return nil
	}
	a.writeTarget(r.Op.String(), t)
	return nil
}

// bodyHasDelimLine reports a line of the here-document body, as written,
// that is its delimiter (bash would end the body there).
func (a *analyzer) bodyHasDelimLine(r *syntax.Redirect) bool {
	delim := r.Word.Lit()
	body := a.source(r.Hdoc)
	if delim == "" || body == "" {
		return delim == "" // no plain delimiter: not modelled
	}
	// The word's text ends with the delimiter line that closes it.
	lines := strings.Split(body, "\n")
	for _, line := range lines[:len(lines)-1] {
		if r.Op == syntax.DashHdoc {
			line = strings.TrimLeft(line, "\t")
		}
		if line == delim {
			return true
		}
	}
	return false
}

// plainDelim reports a heredoc delimiter made of literal text, plainly
// quoted or not.
func plainDelim(w *syntax.Word) bool {
	if w == nil {
		return true
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				return false
			}
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// quotedDelim reports a heredoc delimiter with quotes or a backslash.
func quotedDelim(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok || strings.ContainsRune(l.Value, '\\') {
			return true
		}
	}
	return false
}

// network records a /dev/tcp or /dev/udp path; bash opens a socket for it.
func (a *analyzer) network(p string) bool {
	if rest, ok := strings.CutPrefix(p, "/dev/tcp/"); ok {
		a.an.Network = append(a.an.Network, "tcp/"+rest)
		return true
	}
	if rest, ok := strings.CutPrefix(p, "/dev/udp/"); ok {
		a.an.Network = append(a.an.Network, "udp/"+rest)
		return true
	}
	return false
}

func (a *analyzer) readRedirect(t field) {
	if !t.dyn && a.network(path.Clean(t.s)) {
		return
	}
	a.addRead(t, "input redirection", false)
	if !t.dyn {
		a.checkPath(t.s, false)
	}
}

// writeTarget records a write of t by a redirection or a command.
func (a *analyzer) writeTarget(op string, t field) {
	if !t.dyn && a.network(path.Clean(t.s)) {
		return
	}
	if t.dyn {
		// Asks as it is; it could also be /dev/tcp/..., which a person sees.
		a.an.Writes = append(a.an.Writes, Write{Op: op, Path: t.s, Dynamic: true})
		return
	}
	if isSink(t.s) {
		return
	}
	p, ok := a.abs(t.s)
	a.an.Writes = append(a.an.Writes, Write{Op: op, Path: p, Dynamic: !ok})
	a.checkPath(t.s, false)
}

// abs makes p absolute against the tracked working directory; ok is false
// when p is relative and the directory is unknown.
func (a *analyzer) abs(p string) (string, bool) {
	switch {
	case strings.HasPrefix(p, "/"):
		return cleanKeepDotDot(p), true
	case p == "~" || strings.HasPrefix(p, "~/"):
		if a.home == "" {
			return p, false
		}
		return cleanKeepDotDot(a.home + p[1:]), true
	case a.st.cwd == "":
		return p, false
	}
	return cleanKeepDotDot(a.st.cwd + "/" + p), true
}

// cleanKeepDotDot cleans an absolute path unless it has a ".." element:
// after a symlinked directory ".." leads where the link points, which only
// the file system knows (the gate resolves it), so such a path is kept as
// written.
func cleanKeepDotDot(p string) string {
	if p == ".." || strings.HasPrefix(p, "../") || strings.HasSuffix(p, "/..") || strings.Contains(p, "/../") {
		return p
	}
	return path.Clean(p)
}

// addRead records a read of t.
func (a *analyzer) addRead(t field, by string, recursive bool) {
	if t.procsub {
		return // a pipe from a command analyzed on its own
	}
	r := Read{By: by, Recursive: recursive, OptionRisk: t.optRisk}
	switch {
	case t.glob && t.pat != "" && !t.dyn:
		r.Pattern = true
		p, ok := a.abs(t.pat)
		r.Path, r.Dynamic = p, !ok
	case t.glob && t.pat != "":
		// A loop variable holding names that match a pattern.
		p, ok := a.abs(t.pat)
		r.Path, r.Pattern, r.Dynamic = p, true, !ok
	case t.dyn || t.glob:
		r.Path, r.Dynamic = t.s, true
	default:
		if t.s == "-" || isSink(t.s) || t.s == "/dev/stdin" {
			return
		}
		p, ok := a.abs(t.s)
		r.Path, r.Dynamic = p, !ok
	}
	switch {
	case t.rec:
		// find's {}: any name at any depth below the starting point (dot
		// names too) that matches its -name.
		start, name, _ := strings.Cut(t.pat, "/*")
		p, ok := a.abs(start)
		r.Path, r.Pattern, r.Recursive, r.Dynamic = p, false, true, r.Dynamic || !ok
		if name != "" && name != "*" {
			r.Include = []string{name}
		}
	case r.Pattern && strings.Contains(t.pat, "**"):
		a.globstarReads(&r, t, by)
	}
	a.an.Reads = append(a.an.Reads, r)
}

// globstarReads: zsh (an agent's shell on macOS) takes ** across
// directories (bash does with globstar), and its **/ also matches no
// directory at all (a/**/b is a/b too): the read is judged as one of
// everything below the directory before the first pattern character.
func (a *analyzer) globstarReads(r *Read, t field, by string) {
	prefix := t.pat
	if i := strings.IndexAny(prefix, "*?["); i >= 0 {
		prefix = prefix[:i]
	}
	if j := strings.LastIndexByte(prefix, '/'); j >= 0 {
		prefix = prefix[:j+1]
	} else {
		prefix = "."
	}
	p, ok := a.abs(prefix)
	r.Path, r.Pattern, r.Recursive = p, false, true
	r.Dynamic = r.Dynamic || !ok
}

// checkPath flags a path-like argument or redirect target outside the project.
func (a *analyzer) checkPath(p string, dyn bool) {
	if p == "" {
		return
	}
	if p[0] == '-' {
		i := strings.IndexByte(p, '=')
		if i < 0 {
			return
		}
		p = p[i+1:]
		if p == "" {
			return
		}
	}
	if p[0] != '/' && p[0] != '~' && !strings.Contains(p, "..") && a.st.cwd == a.opts.Cwd {
		return
	}
	if strings.Contains(p, "://") || strings.ContainsAny(p, " \t\n^|(){};'\"\\<>") {
		return // a URL, a script or a regular expression, not a path
	}
	static := p
	if dyn {
		static = p[:strings.Index(p, Dyn)]
		if static == "" {
			return
		}
	}
	outside := false
	root := cleanRoot(a.opts.Cwd)
	switch {
	case static[0] == '~':
		outside = true
	case static[0] == '/':
		if isSink(p) {
			return
		}
		clean := path.Clean(static)
		if root != "" {
			outside = !within(clean, root)
		} else if a.home != "" {
			outside = within(clean, a.home)
		}
	default:
		switch {
		case a.st.cwd != "" && root != "":
			outside = !within(path.Join(a.st.cwd, static), root)
		case root != "":
			outside = true // relative to an unknown directory
		default:
			c := path.Clean(static)
			outside = c == ".." || strings.HasPrefix(c, "../")
		}
	}
	if !outside {
		return
	}
	a.an.OutsideProject = true
	if a.outside == nil {
		a.outside = make(map[string]bool, 4)
	}
	if !a.outside[p] {
		a.outside[p] = true
		a.an.OutsidePaths = append(a.an.OutsidePaths, p)
	}
}

func cleanRoot(cwd string) string {
	if cwd == "" || !path.IsAbs(cwd) {
		return ""
	}
	return path.Clean(cwd)
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	dir = path.Clean(dir)
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// isSink reports the device files a write to which is harmless.
func isSink(p string) bool {
	return p == "/dev/null" || p == "/dev/stdout" || p == "/dev/stderr"
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

package shell

import (
	"fmt"
	"path"
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
// would run, the files its redirections write, and whatever makes it unsafe
// to judge. It never fails: what it cannot understand is reported through
// Analysis.Unsafe or Command.Dynamic, so the gate asks. It never panics.
func Analyze(src string, opts Options) (an *Analysis) {
	an = &Analysis{Commands: make([]Command, 0, 4)}
	defer func() {
		if r := recover(); r != nil {
			// Fail closed, keeping whatever was found so deny rules still apply.
			an.Unsafe = fmt.Sprintf("shell analysis failed: %v", r)
		}
	}()
	a := &analyzer{opts: opts, an: an, res: resolver{home: strings.TrimSuffix(opts.Home, "/")}}
	if opts.Home == "/" {
		a.res.home = "/"
	}
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
	res  resolver
}

func (a *analyzer) unsafe(why string) {
	if a.an.Unsafe == "" {
		a.an.Unsafe = why
	}
}

// unsafeText reports why src cannot be shown or parsed faithfully: control
// characters (bash and mvdan/sh disagree on \r, and a NUL would forge Dyn),
// invisible or bidi Unicode, invalid UTF-8, and long blank runs.
func unsafeText(src string) string {
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
		case invisible(r):
			return fmt.Sprintf("invisible or bidi character %U at byte %d", r, i)
		}
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
// records everything in it. wrapper labels the commands found.
func (a *analyzer) script(src, wrapper string, depth int) {
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f, err := p.Parse(strings.NewReader(src), "")
	if err != nil {
		if wrapper != "" {
			a.unsafe(fmt.Sprintf("cannot parse the %s payload: %v", wrapper, err))
		} else {
			a.unsafe(fmt.Sprintf("cannot parse: %v", err))
		}
	}
	if f == nil {
		return
	}
	w := &walker{a: a, src: src, wrapper: wrapper, depth: depth}
	syntax.Walk(f, w.visit)
}

// walker visits one parsed command line.
type walker struct {
	a       *analyzer
	src     string
	wrapper string
	depth   int
	arith   bool // the line has an arithmetic context
}

func (w *walker) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.CallExpr:
		w.call(n)
	case *syntax.DeclClause:
		w.decl(n)
	case *syntax.Redirect:
		w.a.redirect(n, w.source(n))
	case *syntax.Assign:
		// Bash evaluates a[...] subscripts of names given as strings
		// (declare, printf -v, read, unset, [[ -v ]]), running any $(...).
		if n.Value != nil {
			if f := w.a.res.single(n.Value); subscriptInjection(f.s) {
				w.a.unsafe("assigned value may be evaluated as an array subscript: " + w.source(n))
			}
		}
	case *syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause, *syntax.ArithmExp, *syntax.CStyleLoop:
		w.arith = true
	case *syntax.SglQuoted, *syntax.DblQuoted:
		// Arithmetic and [[ ]] re-evaluate quoted strings such as
		// 'a[$(cmd)]' as expressions; any such string is suspect.
		if w.arith {
			src := w.source(n)
			if strings.Contains(src, "$(") || strings.Contains(src, "`") {
				w.a.unsafe("quoted command substitution in an arithmetic or test context: " + src)
			}
		}
	}
	return true
}

// source returns the text of n as written, "" when its positions are not
// usable (a partial tree after a parse error).
func (w *walker) source(n syntax.Node) string {
	s, e := n.Pos().Offset(), n.End().Offset()
	if !n.Pos().IsValid() || !n.End().IsValid() || s > e || e > uint(len(w.src)) {
		return ""
	}
	return w.src[s:e]
}

func (w *walker) call(ce *syntax.CallExpr) {
	envHazard := ""
	for _, as := range ce.Assigns {
		if as.Name != nil && dangerousEnv(as.Name.Value) {
			envHazard = "sets " + as.Name.Value
			break
		}
	}
	if len(ce.Args) == 0 {
		if envHazard != "" {
			// A shell variable such as PATH or BASH_ENV changes what later
			// commands run; no per-command rule can see that.
			w.a.unsafe("assignment " + envHazard[len("sets "):] + " changes later commands: " + w.source(ce))
		}
		return
	}
	argv := w.a.res.words(ce.Args, make([]field, 0, len(ce.Args)))
	w.a.command(argv, w.source(ce), w.wrapper, envHazard, w.depth)
}

// decl reports declare/export/local/readonly/typeset/nameref as a command.
func (w *walker) decl(d *syntax.DeclClause) {
	argv := make([]field, 0, 1+len(d.Args))
	argv = append(argv, field{s: d.Variant.Value})
	hazard := ""
	for _, as := range d.Args {
		switch {
		case as.Naked && as.Name == nil && as.Value != nil:
			argv = w.a.res.word(as.Value, argv)
		case as.Name != nil:
			f := field{s: as.Name.Value}
			if !as.Naked {
				if as.Index != nil || as.Array != nil {
					f = field{s: as.Name.Value + "=" + Dyn, dyn: true, expanded: true}
				} else if as.Value != nil {
					v := w.a.res.single(as.Value)
					f = field{s: as.Name.Value + "=" + v.s, dyn: v.dyn, glob: v.glob, expanded: v.expanded}
				} else {
					f.s += "="
				}
			}
			if hazard == "" && dangerousEnv(as.Name.Value) && d.Variant.Value != "local" {
				hazard = "sets " + as.Name.Value
			}
			argv = append(argv, f)
		default:
			argv = append(argv, field{s: Dyn, dyn: true, expanded: true})
		}
	}
	w.a.command(argv, w.source(d), w.wrapper, hazard, w.depth)
}

// command records one simple command and, for a wrapper, its inner commands.
func (a *analyzer) command(fs []field, source, wrapper, envHazard string, depth int) {
	if len(fs) == 0 {
		return
	}
	argv := make([]string, len(fs))
	anyDyn := false
	for i, f := range fs {
		argv[i] = f.s
		anyDyn = anyDyn || f.dyn
	}
	c := Command{Argv: argv, Text: joinQuoted(argv), Source: source, Wrapper: wrapper}
	name := fs[0]
	if name.dyn || name.glob || name.expanded || name.s == "" {
		c.Dynamic = "the command name is not static"
	}
	c.AltTexts = altTexts(argv, c.Text)
	c.Hazard = envHazard
	if c.Hazard == "" {
		c.Hazard = hazardOf(fs, argv)
	}
	idx := len(a.an.Commands)
	a.an.Commands = append(a.an.Commands, c)

	isWrapper, dynamic := false, ""
	if c.Dynamic == "" {
		isWrapper, dynamic = a.unwrap(fs, source, envHazard, depth)
	}
	cp := &a.an.Commands[idx]
	if dynamic != "" && cp.Dynamic == "" {
		cp.Dynamic = dynamic
	}
	if !isWrapper {
		skip := patternArg(fs)
		for i, f := range fs[1:] {
			if i+1 != skip {
				a.checkPath(f.s, f.dyn)
			}
		}
	}
	if isWrapper && cp.Dynamic == "" && cp.Hazard == "" && transparentWrapper(baseName(name)) &&
		len(a.an.Commands) > idx+1 && a.an.Commands[idx+1].Wrapper != "" {
		// A wrapper that only changes how its inner command runs (timeout,
		// nice, ...) needs no rule of its own: its text may still deny, as a
		// spelling of the inner command, but allowing the inner command is
		// enough (`timeout 30 npm test` under `npm test *`).
		inner := &a.an.Commands[idx+1]
		inner.AltTexts = append(inner.AltTexts, cp.Text)
		inner.AltTexts = append(inner.AltTexts, cp.AltTexts...)
		a.an.Commands = append(a.an.Commands[:idx], a.an.Commands[idx+1:]...)
	} else if isWrapper && cp.Dynamic == "" && cp.Hazard == "" && !anyDyn {
		// Only the exact wrapper command, never `sudo *`: its inner commands
		// get their own patterns.
		cp.Always = exactPattern(argv)
	} else if !isWrapper && cp.Dynamic == "" && cp.Hazard == "" && !anyDyn {
		cp.Always = AlwaysPattern(argv)
	} else if !isWrapper && cp.Dynamic == "" && !anyDyn && codeFlag(argv) {
		cp.Always = exactPattern(argv)
	}
}

// patternArg returns the index in fs of the script or pattern argument of
// sed, awk and grep-like tools (`/re/p` is not a path), 0 for none.
func patternArg(fs []field) int {
	switch baseName(fs[0]) {
	case "sed", "gsed", "awk", "gawk", "mawk", "nawk", "grep", "egrep", "fgrep", "rg":
	default:
		return 0
	}
	for i := 1; i < len(fs); i++ {
		s := fs[i].s
		if s == "-e" || s == "-f" || s == "--" || strings.HasPrefix(s, "--expression") || strings.HasPrefix(s, "--regexp") {
			return 0 // the script is an option's value; its arguments are checked as paths
		}
		if !strings.HasPrefix(s, "-") {
			return i
		}
	}
	return 0
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
	if p[0] != '/' && p[0] != '~' && !strings.Contains(p, "..") {
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
	cwd := a.opts.Cwd
	switch {
	case static[0] == '~':
		outside = true
	case static[0] == '/':
		if isSink(p) {
			return
		}
		clean := path.Clean(static)
		if cwd != "" {
			outside = !within(clean, cwd)
		} else if a.res.home != "" {
			outside = within(clean, a.res.home)
		}
	default:
		if cwd != "" {
			outside = !within(path.Join(cwd, static), cwd)
		} else {
			c := path.Clean(static)
			outside = c == ".." || strings.HasPrefix(c, "../")
		}
	}
	if !outside {
		return
	}
	a.an.OutsideProject = true
	for _, q := range a.an.OutsidePaths {
		if q == p {
			return
		}
	}
	a.an.OutsidePaths = append(a.an.OutsidePaths, p)
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

// redirect records a redirection that writes a file.
func (a *analyzer) redirect(r *syntax.Redirect, source string) {
	var op string
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut, syntax.DplOut:
		op = r.Op.String()
	default:
		return // input, heredocs, herestrings
	}
	if r.Word == nil {
		return
	}
	fs := a.res.word(r.Word, nil)
	t := fs[0]
	if len(fs) > 1 {
		t = field{s: Dyn, dyn: true, expanded: true} // bash: ambiguous redirect
	}
	if r.Op == syntax.DplOut && !t.dyn && !t.glob && (t.s == "-" || isDigits(t.s)) {
		return // >&2, >&-: fd duplication
	}
	dynamic := t.dyn || t.glob || t.expanded
	if !dynamic && isSink(t.s) {
		return
	}
	p := t.s
	if !dynamic && a.opts.Cwd != "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") {
		p = path.Join(a.opts.Cwd, p)
	} else if !dynamic && strings.HasPrefix(p, "/") {
		p = path.Clean(p)
	}
	a.an.Writes = append(a.an.Writes, Write{Op: op, Path: p, Dynamic: dynamic})
	a.checkPath(t.s, t.dyn)
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

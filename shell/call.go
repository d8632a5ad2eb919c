package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// call walks a simple command: its assignments, its words, and the command
// it runs.
func (a *analyzer) call(ce *syntax.CallExpr, in stdinKind, script *stdinScript) {
	src := a.source(ce)
	exported := len(ce.Args) > 0
	envHazard := ""
	type assigned struct {
		name string
		v    value
	}
	var done []assigned
	for _, as := range ce.Assigns {
		name, v, why := a.assign(as, exported)
		if why != "" {
			if exported {
				envHazard = why
			} else {
				a.notUnderstood(why)
			}
		}
		if !exported && name != "" {
			a.st.set(name, v)
		}
		done = append(done, assigned{name, v})
	}
	if !exported {
		return
	}
	fs := a.res.argv(ce.Args, make([]field, 0, len(ce.Args)))
	if len(done) > 0 && len(fs) > 0 && keepsPrefixAssignments[fs[0].s] && !fs[0].dyn {
		// `x=v export x` and the like: bash keeps such an assignment
		// after the command, where the analysis would drop it.
		a.notUnderstood("an assignment before the builtin " + fs[0].s + " (bash may keep it)")
	}
	if len(fs) == 0 {
		// Every word expanded to nothing: bash runs no command and makes
		// the assignments in this shell.
		if envHazard != "" {
			a.notUnderstood(envHazard)
		}
		for _, d := range done {
			if d.name != "" {
				if why := assignable(d.name, false); why != "" {
					a.notUnderstood("assignment " + why)
				}
				a.st.set(d.name, d.v)
			}
		}
		return
	}
	a.simple(fs, src, envHazard, in, script, a.wrapper, a.depth)
}

// keepsPrefixAssignments are the builtins after which bash may keep (or
// act on) a prefix assignment beyond the command: the special builtins
// and the declaration builtins.
var keepsPrefixAssignments = map[string]bool{
	"export": true, "readonly": true, "declare": true, "typeset": true, "local": true,
	"eval": true, "source": true, ".": true, "exec": true, "set": true, "unset": true,
	"trap": true, ":": true, "shift": true, "return": true, "exit": true, "break": true,
	"continue": true, "times": true, "builtin": true, "command": true, "enable": true,
}

// assign resolves one assignment. It returns the variable's name and new
// value (name "" when nothing is tracked), and why it is not understood.
func (a *analyzer) assign(as *syntax.Assign, exported bool) (string, value, string) {
	if as.Name == nil {
		return "", value{}, "an assignment without a name"
	}
	name := as.Name.Value
	why := assignable(name, exported)
	if why != "" {
		why = "assignment " + why
	}
	if as.Index != nil {
		a.mayAbort() // a[-1]=x on a short array: bad subscript, the line stops
		a.arith(as.Index)
	}
	if as.Array != nil {
		for _, el := range as.Array.Elems {
			if el.Index != nil {
				a.arith(el.Index)
			}
			if el.Value != nil {
				a.res.argv([]*syntax.Word{el.Value}, nil)
			}
		}
		return name, value{f: dynField()}, why
	}
	f := a.res.single(as.Value, ctxNoSplit)
	if as.Index != nil {
		return name, value{f: dynField()}, why
	}
	if as.Append {
		old, ok := a.lookup(name)
		if !ok || old.dyn || f.dyn {
			return name, value{f: dynField()}, why
		}
		f = field{s: old.s + f.s}
	}
	return name, value{f: f}, why
}

// simple judges one simple command given as fields, and records it.
func (a *analyzer) simple(fs []field, source, envHazard string, in stdinKind, script *stdinScript, wrapper string, depth int) {
	name := fs[0]
	if name.dyn || name.glob || name.expanded || name.s == "" {
		a.recordDyn(fs, source, wrapper, "the command name is not static")
		return
	}
	if why := zshCommandWord(name.s); why != "" {
		a.recordDyn(fs, source, wrapper, "not understood: "+why)
		return
	}
	if strings.IndexByte(name.s, '/') < 0 {
		if handled := a.builtin(fs, source, envHazard, wrapper); handled {
			return
		}
	}
	a.external(fs, source, envHazard, in, script, wrapper, depth)
}

// zshCommandWord says why a command name is read otherwise by zsh (an
// agent's shell on macOS) or by the wrapper before it: "" when it is not.
func zshCommandWord(name string) string {
	switch {
	case strings.HasPrefix(name, "-"):
		// zsh runs the next word (`- cmd`); env reads `-` as -i; bash's
		// time takes `--`.
		return "a command named `" + name + "` (zsh, env and time read it as an option or runs the next word)"
	case name == "noglob" || name == "nocorrect":
		return "zsh's precommand modifier " + name + " (it runs the next word its own way)"
	case zshBuiltins[name]:
		return "zsh's builtin " + name + " (it changes how later commands are read or run, or runs one)"
	}
	return ""
}

// zshBuiltins are zsh builtins that are not bash's and that change how the
// shell reads or runs later commands, or run one (r re-runs the last,
// ztcp opens a socket, chdir is cd). Read-only.
var zshBuiltins = map[string]bool{
	"setopt": true, "unsetopt": true, "emulate": true, "zmodload": true, "autoload": true, "disable": true,
	"integer": true, "float": true, "functions": true, "unfunction": true, "unhash": true, "rehash": true,
	"zle": true, "bindkey": true, "zstyle": true, "zparseopts": true, "zformat": true, "zregexparse": true,
	"sched": true, "vared": true, "print": true, "repeat": true, "limit": true, "unlimit": true, "r": true,
	"chdir": true, "zcompile": true, "zsystem": true, "zselect": true, "zpty": true, "zsocket": true, "ztcp": true,
	"private": true, "getln": true, "pushln": true, "bye": true, "ttyctl": true, "zftp": true, "zcurses": true,
	"zprof": true, "zstat": true, "strftime": true, "sysopen": true, "syswrite": true, "sysread": true,
	"zf_rm": true, "zf_mv": true, "zf_ln": true, "zf_mkdir": true, "zf_chmod": true, "zf_chown": true,
	"zf_rmdir": true, "zf_sync": true, "zgdbmpath": true, "ztie": true, "zuntie": true, "pcre_compile": true,
	"whence": true, "where": true, "compdef": true, "compinit": true, "add-zsh-hook": true, "zsh-mime-setup": true,
}

// recordDyn records a command that is not understood.
func (a *analyzer) recordDyn(fs []field, source, wrapper, why string) {
	a.record(fs, source, wrapper, why, "")
}

// record appends one command to the analysis and returns its index.
func (a *analyzer) record(fs []field, source, wrapper, dynamic, hazard string) int {
	argv := make([]string, len(fs))
	var globs []bool
	for i, f := range fs {
		argv[i] = f.s
		if (f.glob || f.dyn) && !f.quoted {
			if globs == nil {
				globs = make([]bool, len(fs))
			}
			globs[i] = true
		}
	}
	if strings.HasPrefix(hazard, "assignment ") && dynamic == "" {
		// An environment prefix the rules' text never shows: no rule,
		// however exact, can have meant it.
		dynamic, hazard = "not understood: "+hazard, ""
	}
	c := Command{Argv: argv, Globs: globs, Text: joinQuoted(argv), Source: source, Wrapper: wrapper,
		Cwd: a.st.cwd, Dynamic: dynamic, Hazard: hazard}
	c.AltTexts = altTexts(argv, c.Text)
	c.Canon = canonText(argv)
	a.an.Commands = append(a.an.Commands, c)
	return len(a.an.Commands) - 1
}

// external judges a program (or a wrapper and what it runs) and records it.
func (a *analyzer) external(fs []field, source, envHazard string, in stdinKind, script *stdinScript, wrapper string, depth int) {
	idx := a.record(fs, source, wrapper, "", envHazard)
	name := baseName(fs[0])
	dynamic, hazard := "", ""
	isWrapper, wdyn := a.unwrap(fs, source, envHazard, depth)
	dynamic = wdyn
	if !isWrapper || name == "find" {
		d, h, known := a.program(name, fs)
		if !known && !isWrapper && !inertCommand(name) {
			c := &a.an.Commands[idx]
			c.Unmodeled = true
			for i, f := range fs {
				if f.glob && f.pat != "" {
					if c.Patterns == nil {
						c.Patterns = make([]string, len(fs))
					}
					c.Patterns[i], _ = a.abs(f.pat) // relative when the directory is not known
				}
			}
		}
		if dynamic == "" {
			dynamic = d
		}
		hazard = h
		if !known && !isWrapper && anyDyn(fs) && !inertCommand(name) {
			for _, f := range fs[1:] {
				if f.dyn && !f.procsub && (!f.glob || f.pat == "") {
					// (A pattern whose directory is only known at run
					// time, `$d/.e*`, names files no rule sees.)
					dynamic = "not understood: a word only known at run time in the arguments of " + name
					break
				}
			}
		}
	}
	if isShell(name) {
		if h := shellStartup(fs[1:]); h != "" && hazard == "" {
			hazard = h
		}
		if why := shellOptions(fs[1:]); why != "" && dynamic == "" {
			dynamic = "not understood: " + name + " " + why
		}
	}
	if isShell(name) && !isWrapper {
		why, file := a.shellStdin(fs[1:], in, script, name, depth)
		if why != "" && dynamic == "" {
			dynamic = why
		}
		if file != "" && hazard == "" {
			hazard = "runs the script " + file + ", which the analysis does not read"
		}
	}
	if (name == "source" || name == ".") && hazard == "" {
		hazard = "runs a script the analysis does not read (" + name + ")"
	}
	cp := &a.an.Commands[idx]
	if cp.Dynamic == "" {
		cp.Dynamic = dynamic
	}
	if cp.Hazard == "" {
		cp.Hazard = hazard
	}
	if cp.Hazard == "" {
		cp.Hazard = hazardOf(fs, cp.Argv)
	}
	if !isWrapper {
		skip := patternArg(fs)
		for i, f := range fs[1:] {
			if i+1 != skip {
				a.checkPath(f.s, f.dyn)
			}
		}
	}
	anyD := false
	for _, f := range fs {
		anyD = anyD || f.dyn || f.glob
	}
	switch {
	case isWrapper && cp.Dynamic == "" && cp.Hazard == "" && transparentWrapper(name) &&
		len(a.an.Commands) > idx+1 && a.an.Commands[idx+1].Wrapper != "":
		// A wrapper that only changes how its inner command runs (timeout,
		// nice, ...) needs no rule of its own: its text may still deny, as a
		// spelling of the inner command, but allowing the inner command is
		// enough (`timeout 30 npm test` under `npm test *`).
		inner := &a.an.Commands[idx+1]
		inner.Via = append(append([][]string{cp.Argv}, cp.Via...), inner.Via...)
		inner.AltTexts = append(inner.AltTexts, cp.Text)
		inner.AltTexts = append(inner.AltTexts, cp.AltTexts...)
		a.an.Commands = append(a.an.Commands[:idx], a.an.Commands[idx+1:]...)
	case isWrapper && cp.Dynamic == "" && cp.Hazard == "" && !anyD:
		// Only the exact wrapper command, never `sudo *`: its inner commands
		// get their own patterns.
		cp.Always = exactPattern(cp.Argv)
	case !isWrapper && cp.Dynamic == "" && cp.Hazard == "" && !anyD:
		cp.Always = AlwaysPattern(cp.Argv)
	case !isWrapper && cp.Dynamic == "" && !anyD:
		// A hazard: only the exact command, which a person saw whole.
		cp.Always = exactPattern(cp.Argv)
	}
}

// shellStdin judges a shell started without -c: with no script operand it
// reads its script from standard input, which is analyzed when it is a
// literal heredoc or here-string and not understood otherwise.
func (a *analyzer) shellStdin(args []field, in stdinKind, script *stdinScript, name string, depth int) (string, string) {
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dyn || f.glob {
			return "not understood: " + name + " with an argument only known at run time", ""
		}
		s := f.s
		if s == "--" || s == "-" {
			if i+1 < len(args) {
				return "", args[i+1].s // a script file
			}
			break
		}
		if strings.HasPrefix(s, "--") {
			continue
		}
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			if strings.ContainsAny(s[1:], "oO") {
				i++
			}
			if strings.ContainsRune(s[1:], 's') || strings.ContainsRune(s[1:], 'i') {
				break
			}
			continue
		}
		return "", s // a script file
	}
	switch {
	case script != nil && script.literal:
		if w := a.payload(field{s: script.text}, name+" standard input", "", depth); w != "" {
			return "not understood: " + w, ""
		}
		return "", ""
	case script != nil:
		return "not understood: " + name + " reads a script only known at run time from its standard input", ""
	case in == stdinPipe:
		return "not understood: " + name + " reads its script from a pipe", ""
	}
	return "not understood: " + name + " reads its script from standard input", ""
}

// shellStartup reports a shell started as a login or interactive shell, or
// with a startup file: it first runs scripts the analysis does not read.
func shellStartup(args []field) string {
	for i, f := range args {
		s := f.s
		switch {
		case s == "--login" || s == "--rcfile" || s == "--init-file" || s == "--interactive":
			return "the shell runs startup files (" + s + ")"
		case s == "--" || !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+"):
			return ""
		case strings.HasPrefix(s, "--"):
		default:
			if strings.ContainsAny(s[1:], "li") && s[0] == '-' {
				return "the shell runs startup files (" + s + ")"
			}
			if strings.ContainsAny(s[1:], "oO") && i+1 < len(args) && strings.ContainsRune(s[1:], 'c') {
				continue
			}
		}
	}
	return ""
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

// canonText returns the text of argv without git's harmless global
// options, "" when there are none.
func canonText(argv []string) string {
	if len(argv) < 3 || argv[0] != "git" {
		return ""
	}
	out := []string{"git"}
	i := 1
	for ; i < len(argv); i++ {
		switch argv[i] {
		case "--no-pager", "-P", "--no-optional-locks", "--no-advice", "--literal-pathspecs":
			continue
		case "-C":
			if i+1 < len(argv) && !strings.Contains(argv[i+1], Dyn) {
				i++
				continue
			}
		}
		break
	}
	if i == 1 {
		return ""
	}
	return joinQuoted(append(out, argv[i:]...))
}

// shellOptions says why a shell's own options change how its script is
// read (-k reads assignments anywhere, -a exports them, +B turns brace
// expansion off, -O/+O and -o set other options, --posix), "" for the
// options the analysis models.
func shellOptions(args []field) string {
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "--" || s == "-" || !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+"):
			return ""
		case strings.HasPrefix(s, "--"):
			switch s {
			case "--norc", "--noprofile", "--login", "--noediting", "--restricted", "--verbose", "--rcfile", "--init-file":
			default:
				return "option " + s
			}
		default:
			for j := 1; j < len(s); j++ {
				switch s[j] {
				case 'c', 'e', 'u', 'x', 'v', 'l', 'i', 's', 'n', 'r', 'f', 'h', 'p', 'E', 'T', 'C', 'b', 'm', 'H', 'P', 't':
				case 'o':
					if i+1 < len(args) {
						i++
						switch args[i].s {
						case "pipefail", "errexit", "nounset", "xtrace", "verbose", "errtrace", "functrace", "noclobber", "noglob":
						default:
							return "option -o " + args[i].s
						}
					}
				default:
					return "option " + s
				}
			}
		}
	}
	return ""
}

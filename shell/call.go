package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// call walks a simple command: its assignments, its words, and the command
// it runs.
func (a *analyzer) call(ce *syntax.CallExpr, in stdinKind, script *stdinScript) {
	src := a.source(ce)
	exported := len(ce.Args) > 0
	envHazard := ""
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
	}
	if !exported {
		return
	}
	fs := a.res.argv(ce.Args, make([]field, 0, len(ce.Args)))
	if len(fs) == 0 {
		return // every word expanded to nothing: bash only assigns
	}
	a.simple(fs, src, envHazard, in, script, a.wrapper, a.depth)
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

// assignable says why setting the shell or environment variable name is
// not understood, "" when it is harmless. Bash's own variables and those
// that change how programs behave are asked about; the list of names that
// may be set is positive for upper-case names, so an unknown one asks.
func assignable(name string, exported bool) string {
	if !validName(name) {
		return "to `" + name + "`, which is not a plain variable name"
	}
	if strings.HasPrefix(name, "BASH") || shellVars[name] {
		return "to " + name + ", which changes how the shell runs commands"
	}
	lower := false
	for i := 0; i < len(name); i++ {
		if name[i] >= 'a' && name[i] <= 'z' {
			lower = true
			break
		}
	}
	if lower {
		l := strings.ToLower(name)
		if strings.Contains(l, "proxy") || strings.HasPrefix(l, "npm_config_") || l == "histchars" ||
			l == "auto_resume" || strings.HasPrefix(l, "yarn_") || strings.HasPrefix(l, "pnpm_") {
			return "to " + name + ", which changes how programs behave"
		}
		return ""
	}
	if safeEnv[name] || strings.HasPrefix(name, "LC_") {
		return ""
	}
	return "to " + name + ", which may change how programs behave"
}

// shellVars are bash's own variables that change what runs or where.
var shellVars = map[string]bool{
	"IFS": true, "PATH": true, "HOME": true, "ENV": true, "CDPATH": true, "PS0": true, "PS1": true, "PS2": true,
	"PS3": true, "PS4": true, "PROMPT_COMMAND": true, "SHELLOPTS": true, "GLOBIGNORE": true, "OLDPWD": true,
	"PWD": true, "HISTFILE": true, "HISTCONTROL": true, "INPUTRC": true, "FUNCNEST": true, "TMOUT": true,
	"MAIL": true, "MAILPATH": true, "OPTIND": true, "OPTARG": true, "POSIXLY_CORRECT": true, "EXECIGNORE": true,
	"GLOBSORT": true, "TIMEFORMAT": true, "COMP_WORDBREAKS": true, "HOSTFILE": true, "SHELL": true,
}

// safeEnv are upper-case names that may be set: they tune output, builds
// and tests, and run nothing.
var safeEnv = map[string]bool{
	"CI": true, "DEBUG": true, "VERBOSE": true, "QUIET": true, "NODE_ENV": true, "RAILS_ENV": true, "RACK_ENV": true,
	"APP_ENV": true, "FLASK_ENV": true, "FLASK_DEBUG": true, "GOOS": true, "GOARCH": true, "GOARM": true,
	"GOAMD64": true, "CGO_ENABLED": true, "GO111MODULE": true, "GOMAXPROCS": true, "GOTRACEBACK": true, "GOGC": true,
	"GOMEMLIMIT": true, "RUST_BACKTRACE": true, "RUST_LOG": true, "RUST_TEST_THREADS": true, "CARGO_TERM_COLOR": true,
	"CARGO_INCREMENTAL": true, "LOG_LEVEL": true, "LOGLEVEL": true, "LANG": true, "LANGUAGE": true, "TZ": true,
	"TERM": true, "NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true, "COLUMNS": true,
	"LINES": true, "PORT": true, "PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true, "PYTHONHASHSEED": true,
	"PYTHONIOENCODING": true, "PYTHONUTF8": true, "NODE_NO_WARNINGS": true, "GIT_AUTHOR_NAME": true,
	"GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true, "GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true,
	"GIT_COMMITTER_DATE": true, "GIT_TERMINAL_PROMPT": true, "GIT_OPTIONAL_LOCKS": true, "HUSKY": true,
	"DIR": true, "FILE": true, "FILES": true, "OUT": true, "N": true, "I": true, "COUNT": true, "NAME": true,
	"VERSION": true, "TAG": true, "BRANCH": true, "MSG": true, "TIMEOUT": true,
}

// declClause walks declare, export, local, readonly and typeset as parsed:
// options, then names and assignments. A quoted argument is assigned at
// run time, so its text must be a literal NAME=VALUE.
func (a *analyzer) declClause(d *syntax.DeclClause) {
	variant := d.Variant.Value
	argv := []field{{s: variant}}
	exported := variant == "export"
	opts := true
	for _, as := range d.Args {
		switch {
		case as.Naked && as.Name == nil && as.Value != nil:
			fs := a.res.argv([]*syntax.Word{as.Value}, nil)
			for _, f := range fs {
				argv = append(argv, f)
				if f.dyn || f.glob {
					a.notUnderstood(variant + " with an argument only known at run time")
					continue
				}
				if opts && (strings.HasPrefix(f.s, "-") || strings.HasPrefix(f.s, "+")) && f.s != "-" {
					if f.s == "--" {
						opts = false
						continue
					}
					if why := declOptions(variant, f.s); why != "" {
						a.notUnderstood(why)
					}
					if strings.Contains(f.s, "x") && f.s[0] == '-' {
						exported = true
					}
					continue
				}
				opts = false
				a.declWord(variant, f.s, exported)
			}
		case as.Name != nil:
			opts = false
			name, v, why := a.assign(as, exported)
			if why != "" {
				a.notUnderstood(why)
			}
			if as.Naked {
				argv = append(argv, field{s: as.Name.Value})
				if _, known := a.st.vars[name]; !known {
					a.st.setUnknown(name)
				}
				continue
			}
			a.st.set(name, v)
			text := as.Name.Value + "="
			if as.Array != nil || as.Index != nil {
				argv = append(argv, field{s: text + Dyn, dyn: true, expanded: true})
				continue
			}
			argv = append(argv, field{s: text + v.f.s, dyn: v.f.dyn, expanded: v.f.expanded})
		default:
			a.notUnderstood(variant + " with an argument of this form")
		}
	}
	i := a.record(argv, a.source(d), a.wrapper, "", "")
	if !anyDyn(argv) {
		a.an.Commands[i].Always = exactPattern(a.an.Commands[i].Argv)
	}
}

// declOptions says why an option word of declare and friends is not
// understood: -i makes later assignments arithmetic, -n makes a name
// reference, -f/-F act on functions.
func declOptions(variant, s string) string {
	for _, c := range s[1:] {
		switch c {
		case 'a', 'A', 'r', 'x', 'g', 'p', 'l', 'u', 't':
		case 'n':
			if variant == "export" && s[0] == '-' {
				continue // export -n: un-export
			}
			return variant + " " + s + " makes a name reference"
		default:
			return variant + " option " + s
		}
	}
	return ""
}

// declWord handles a run-time NAME or NAME=VALUE argument of declare and
// friends, given as a literal.
func (a *analyzer) declWord(variant, s string, exported bool) {
	name, val, hasVal := strings.Cut(s, "=")
	name = strings.TrimSuffix(name, "+")
	if !validName(name) {
		a.notUnderstood(variant + " of `" + s + "`, which bash evaluates as a subscript or compound assignment")
		return
	}
	if why := assignable(name, exported); why != "" {
		a.notUnderstood(variant + " assignment " + why)
	}
	if !hasVal {
		if _, known := a.st.vars[name]; !known {
			a.st.setUnknown(name)
		}
		return
	}
	if strings.HasPrefix(val, "(") {
		a.notUnderstood(variant + " of a quoted compound assignment, which bash evaluates")
		return
	}
	a.st.set(name, value{f: field{s: val}})
}

// simple judges one simple command given as fields, and records it.
func (a *analyzer) simple(fs []field, source, envHazard string, in stdinKind, script *stdinScript, wrapper string, depth int) {
	name := fs[0]
	if name.dyn || name.glob || name.expanded || name.s == "" {
		a.recordDyn(fs, source, wrapper, "the command name is not static")
		return
	}
	if strings.IndexByte(name.s, '/') < 0 {
		if handled := a.builtin(fs, source, envHazard, wrapper); handled {
			return
		}
	}
	a.external(fs, source, envHazard, in, script, wrapper, depth)
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
	c := Command{Argv: argv, Globs: globs, Text: joinQuoted(argv), Source: source, Wrapper: wrapper,
		Cwd: a.st.cwd, Dynamic: dynamic, Hazard: hazard}
	c.AltTexts = altTexts(argv, c.Text)
	c.Canon = canonText(argv)
	a.an.Commands = append(a.an.Commands, c)
	return len(a.an.Commands) - 1
}

// builtin handles the bash builtins that change the shell's state or
// evaluate text; it reports false for everything else.
func (a *analyzer) builtin(fs []field, source, envHazard, wrapper string) bool {
	name := fs[0].s
	args := fs[1:]
	why := ""
	switch name {
	case "cd":
		a.cd(args)
	case "pushd":
		old := a.st.cwd
		a.cd(args)
		if len(args) == 0 || old == "" {
			a.st.dirs = nil
		} else {
			a.st.dirs = append([]string{old}, a.st.dirs...)
		}
	case "popd":
		if len(args) == 0 && len(a.st.dirs) > 0 && a.st.dirs[0] != "" {
			a.st.cwd, a.st.dirs = a.st.dirs[0], a.st.dirs[1:]
		} else {
			a.st.cwd, a.st.dirs = "", nil
		}
	case "export", "declare", "typeset", "local", "readonly":
		// Reached only when the name was quoted or came from a wrapper:
		// every argument is assigned at run time.
		exported := name == "export"
		for _, f := range args {
			if f.dyn || f.glob {
				why = name + " with an argument only known at run time"
				continue
			}
			if strings.HasPrefix(f.s, "-") || strings.HasPrefix(f.s, "+") {
				if w := declOptions(name, f.s); w != "" {
					why = w
				}
				continue
			}
			a.declWord(name, f.s, exported)
		}
	case "read":
		why = a.readNames(args, "aduinNpt", "a")
	case "mapfile", "readarray":
		why = a.readNames(args, "dnOsuCc", "")
		for _, f := range args {
			if strings.HasPrefix(f.s, "-") && strings.ContainsAny(f.s, "C") {
				why = name + " -C runs a callback (text evaluated as code)"
			}
		}
	case "printf":
		why = a.printfV(args)
	case "getopts":
		if len(args) < 2 || args[1].dyn || !validName(args[1].s) {
			why = "getopts into a variable only known at run time"
		} else if w := assignable(args[1].s, false); w != "" {
			why = "getopts assigns " + w
		} else {
			a.st.setUnknown(args[1].s)
		}
	case "unset":
		for _, f := range args {
			if f.dyn || strings.ContainsAny(f.s, "[") {
				why = "unset of `" + f.s + "`, which bash evaluates as a subscript"
			} else if !strings.HasPrefix(f.s, "-") {
				if w := assignable(f.s, false); w != "" {
					why = "unset " + w
				}
				a.st.setUnknown(f.s)
			}
		}
	case "let":
		why = "let given as a plain command (its arguments are arithmetic)"
	case "test", "[":
		why = testVarSet(args)
	case "trap":
		if len(args) > 0 && args[0].s != "-p" && args[0].s != "-l" && args[0].s != "-" {
			why = "trap runs its text as code later"
		}
	case "set":
		why = setOptions(args)
	case "shopt", "enable", "bind", "complete", "compgen", "compopt", "alias", "unalias", "fc", "coproc",
		"caller", "disown", "suspend", "logout", "ulimit", "umask", "builtin", "source", ".":
		if name == "source" || name == "." {
			return false // judged as a command by its rules; reads a script
		}
		if name == "builtin" {
			return false // a wrapper
		}
		why = name + " changes how the shell reads or runs later commands"
		if name == "umask" || name == "ulimit" {
			if len(args) == 0 || len(args) == 1 && (args[0].s == "-S" || args[0].s == "-a") {
				why = ""
			}
		}
	case "history":
		if len(args) > 1 || len(args) == 1 && !isDigits(args[0].s) {
			why = "history with options (it can change or run the history)"
		}
	case "hash":
		for _, f := range args {
			if strings.HasPrefix(f.s, "-") && strings.ContainsAny(f.s, "pd") || f.dyn {
				why = "hash -p changes which program a name runs"
			}
		}
	case "exec":
		if len(args) == 0 {
			break // only redirections
		}
		return false
	default:
		return false
	}
	hazard := envHazard
	i := a.record(fs, source, wrapper, "", hazard)
	if why != "" {
		a.an.Commands[i].Dynamic = "not understood: " + why
	} else if a.an.Commands[i].Hazard == "" && anyDyn(fs) && !dynSafeBuiltin(name) {
		a.an.Commands[i].Dynamic = "not understood: " + name + " with an argument only known at run time"
	}
	if a.an.Commands[i].Dynamic == "" && a.an.Commands[i].Hazard == "" && !anyDyn(fs) {
		a.an.Commands[i].Always = AlwaysPattern(a.an.Commands[i].Argv)
	}
	return true
}

func anyDyn(fs []field) bool {
	for _, f := range fs[1:] {
		if f.dyn || f.glob {
			return true
		}
	}
	return false
}

// dynSafeBuiltin lists the builtins handled above whose run-time arguments
// change nothing but a value the analyzer already treats as unknown.
func dynSafeBuiltin(name string) bool {
	switch name {
	case "read", "mapfile", "readarray", "printf", "test", "[", "getopts", "cd", "pushd", "popd":
		return true
	}
	return false
}

// cd moves the tracked working directory.
func (a *analyzer) cd(args []field) {
	var target *field
	for i := range args {
		f := &args[i]
		if f.dyn || f.glob {
			a.st.cwd = ""
			return
		}
		if f.s == "--" {
			if i+1 < len(args) {
				target = &args[i+1]
			}
			break
		}
		if strings.HasPrefix(f.s, "-") && f.s != "-" {
			continue // -L, -P, -e, -@
		}
		target = f
		break
	}
	switch {
	case target == nil:
		a.st.cwd = a.home
	case target.s == "-" || target.s == "":
		a.st.cwd = ""
	default:
		p, ok := a.abs(target.s)
		if !ok || strings.Contains(p, Dyn) {
			a.st.cwd = ""
			return
		}
		a.st.cwd = path.Clean(p)
		a.checkPath(target.s, false)
	}
}

// readNames handles the variable operands of read and mapfile: each is set
// to a value known only at run time.
func (a *analyzer) readNames(args []field, argOpts, arrayOpts string) string {
	why := ""
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dyn || f.glob {
			return "a variable name only known at run time"
		}
		if strings.HasPrefix(f.s, "-") && len(f.s) > 1 {
			for j := 1; j < len(f.s); j++ {
				if strings.IndexByte(argOpts, f.s[j]) >= 0 {
					v := f.s[j+1:]
					if v == "" && i+1 < len(args) {
						i++
						v = args[i].s
					}
					if strings.IndexByte(arrayOpts, f.s[j]) >= 0 {
						if w := a.setRunTime(v); w != "" {
							why = w
						}
					}
					break
				}
			}
			continue
		}
		if w := a.setRunTime(f.s); w != "" {
			why = w
		}
	}
	return why
}

// setRunTime marks a variable as set to a run-time value.
func (a *analyzer) setRunTime(name string) string {
	if !validName(name) {
		return "`" + name + "` as a variable name (bash evaluates a subscript in it)"
	}
	if w := assignable(name, false); w != "" {
		return "assignment " + w
	}
	a.st.setUnknown(name)
	return ""
}

// printfV handles printf -v NAME.
func (a *analyzer) printfV(args []field) string {
	for i := 0; i < len(args); i++ {
		s := args[i].s
		if args[i].dyn && i == 0 {
			return "printf with a first argument only known at run time"
		}
		if s == "--" || !strings.HasPrefix(s, "-") {
			return ""
		}
		if v, ok := strings.CutPrefix(s, "-v"); ok {
			if v == "" && i+1 < len(args) {
				i++
				if args[i].dyn {
					return "printf -v into a variable only known at run time"
				}
				v = args[i].s
			}
			return a.setRunTime(v)
		}
	}
	return ""
}

// testVarSet finds test -v / [ -v ], which evaluates a subscript.
func testVarSet(args []field) string {
	for i, f := range args {
		if f.s == "-v" || f.s == "-R" {
			if i+1 >= len(args) || args[i+1].dyn || !validName(args[i+1].s) {
				return "test -v on something other than a plain variable name"
			}
		}
	}
	return ""
}

// setOptions allows the `set` forms agents use; others change parsing or
// the environment of later commands (-a exports every assignment, -k reads
// assignments anywhere, +B turns off brace expansion, ...).
func setOptions(args []field) string {
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dyn {
			return "set with an argument only known at run time"
		}
		s := f.s
		if s == "--" || s == "-" {
			return "" // positional parameters follow
		}
		if !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+") {
			return ""
		}
		for j := 1; j < len(s); j++ {
			switch s[j] {
			case 'e', 'u', 'x', 'v', 'E', 'T', 'C', 'f', 'b', 'm', 'h':
			case 'o':
				if j != len(s)-1 || i+1 >= len(args) {
					if len(s) == 2 && i+1 >= len(args) {
						return "" // set -o: list
					}
					return "set " + s
				}
				i++
				switch args[i].s {
				case "pipefail", "errexit", "nounset", "xtrace", "verbose", "errtrace", "functrace", "noclobber", "noglob", "monitor", "hashall":
				default:
					return "set -o " + args[i].s
				}
			default:
				return "set " + s
			}
		}
	}
	return ""
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
		if dynamic == "" {
			dynamic = d
		}
		hazard = h
		if !known && !isWrapper && anyDyn(fs) && !inertCommand(name) {
			for _, f := range fs[1:] {
				if f.dyn && !f.glob && !f.procsub {
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

package shell

// Bash builtins that change the shell's state or evaluate text.

import (
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// declClause walks declare, export, local, readonly and typeset as parsed:
// options, then names and assignments. A quoted argument is assigned at
// run time, so its text must be a literal NAME=VALUE.
func (a *analyzer) declClause(d *syntax.DeclClause) {
	variant := d.Variant.Value
	if variant == "local" || variant == "readonly" || variant == "nameref" {
		// local fails outside a function (functions are not modelled);
		// readonly makes later assignments fail.
		a.notUnderstood(variant + ", whose assignments may fail or stick")
	}
	argv := []field{{s: variant}}
	exported := variant == "export"
	opts := true
	// bash expands every argument before it assigns any (declare x=a y=$x
	// gives y the old x); -a/-A/+a/+A conversions bash may refuse, keeping
	// the old value.
	type pend struct {
		name string
		v    value
	}
	var pending []pend
	arrays := false
	defer func() {
		for _, p := range pending {
			if arrays {
				a.st.setUnknown(p.name)
			} else {
				a.st.set(p.name, p.v)
			}
		}
	}()
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
					// (zsh's export refuses -n and keeps the old value.)
					arrays = arrays || strings.ContainsAny(f.s, "aA") || variant == "export" && f.s != "-p"
					continue
				}
				opts = false
				if name, v, ok := a.declWord(variant, f.s, exported); ok {
					pending = append(pending, pend{name, v})
				}
			}
		case as.Name != nil:
			opts = false
			if as.Value != nil && (hasBrace(as.Value) || braceAcrossParts(as.Value)) {
				// declare x={a,b}: bash brace-expands declaration arguments.
				a.notUnderstood(variant + " with a brace expansion in a value")
			}
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
			pending = append(pending, pend{name, v})
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
	// An option that makes bash skip or transform the assignments (-p
	// prints, -r makes later ones fail, -l/-u change case, -i makes them
	// arithmetic, -n a reference, an option export rejects fails the
	// whole command) would leave the analysis believing a value the shell
	// never assigned.
	for _, c := range s[1:] {
		switch {
		case variant == "export" && c == 'n' && s[0] == '-':
		case variant != "export" && (c == 'a' || c == 'A' || c == 'x' || c == 'g'):
		default:
			return variant + " option " + s
		}
	}
	return ""
}

// declWord handles a run-time NAME or NAME=VALUE argument of declare and
// friends, given as a literal.
func (a *analyzer) declWord(variant, s string, exported bool) (string, value, bool) {
	name, val, hasVal := strings.Cut(s, "=")
	name = strings.TrimSuffix(name, "+")
	if !validName(name) {
		a.notUnderstood(variant + " of `" + s + "`, which bash evaluates as a subscript or compound assignment")
		return "", value{}, false
	}
	if why := assignable(name, exported); why != "" {
		a.notUnderstood(variant + " assignment " + why)
	}
	if !hasVal {
		if _, known := a.st.vars[name]; !known {
			a.st.setUnknown(name)
		}
		return "", value{}, false
	}
	if strings.HasPrefix(val, "(") {
		a.notUnderstood(variant + " of a quoted compound assignment, which bash evaluates")
		return "", value{}, false
	}
	return name, value{f: field{s: val}}, true
}

// builtin handles the bash builtins that change the shell's state or
// evaluate text; it reports false for everything else.
func (a *analyzer) builtin(fs []field, source, envHazard, wrapper string) bool {
	name := fs[0].s
	args := fs[1:]
	why := ""
	cwd := a.st.cwd // where the builtin runs, before it moves it
	if name == "break" || name == "continue" {
		// The loop ends here, or goes on with this state (continue):
		// what the rest of the body does may not happen.
		a.loopExit(true)
	}
	if w := a.zshMath(name, args); w != "" {
		i := a.record(fs, source, wrapper, "not understood: "+w, envHazard)
		a.an.Commands[i].Cwd = cwd
		return true
	}
	switch name {
	case "cd":
		a.cd(args)
	case "pushd":
		old := a.st.cwd
		if len(args) > 0 && (strings.HasPrefix(args[0].s, "-") || strings.HasPrefix(args[0].s, "+")) {
			// pushd -n does not move; pushd +N rotates the stack.
			a.st.cwd, a.st.dirs = "", nil
			break
		}
		if len(args) == 0 {
			// pushd alone swaps the top two directories.
			if old == "" || len(a.st.dirs) == 0 || a.st.dirs[0] == "" {
				a.st.cwd, a.st.dirs = "", nil
				break
			}
			a.st.cwd = a.st.dirs[0]
			a.st.dirs = append([]string{old}, a.st.dirs[1:]...)
			break
		}
		a.cd(args)
		if old == "" || a.st.cwd == "" {
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
	case "local", "readonly":
		// local fails outside a function (and functions are not
		// modelled); readonly makes later assignments fail.
		why = name + ", whose assignments may fail"
	case "export", "declare", "typeset":
		// Reached only when the name was quoted or came from a wrapper:
		// every argument is assigned at run time.
		exported, arrays := name == "export", false
		for _, f := range args {
			if f.dyn || f.glob {
				why = name + " with an argument only known at run time"
				continue
			}
			if strings.HasPrefix(f.s, "-") || strings.HasPrefix(f.s, "+") {
				if w := declOptions(name, f.s); w != "" {
					why = w
				}
				arrays = arrays || strings.ContainsAny(f.s, "aA")
				continue
			}
			// (The words were expanded before: their values are as given.)
			if n, v, ok := a.declWord(name, f.s, exported); ok && !arrays {
				a.st.set(n, v)
			} else if ok {
				a.st.setUnknown(n)
			}
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
	case "dirs":
		for _, f := range args {
			if !strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "+") || f.dyn {
				// zsh: dirs DIR... replaces the directory stack.
				a.st.dirs = nil
			}
		}
		return false
	case "getopts":
		if len(args) > 0 && args[0].s == "--" {
			args = args[1:]
		}
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
	case "source", ".", "builtin":
		// source runs a script: a hazard judged with the program's rules;
		// builtin is a wrapper.
		return false
	case "shopt", "enable", "bind", "complete", "compgen", "compopt", "alias", "unalias", "fc", "coproc",
		"caller", "disown", "suspend", "logout", "ulimit", "umask":
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
			if strings.HasPrefix(f.s, "-") && strings.ContainsAny(f.s, "pd") || f.dyn || strings.Contains(f.s, "=") {
				why = "hash -p (zsh: hash NAME=PATH) changes which program a name runs"
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
	a.an.Commands[i].Cwd = cwd
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
	physical := false
	operands := 0
	dashes := false
	for i := range args {
		f := &args[i]
		if f.dyn || f.glob {
			a.st.cwd = ""
			return
		}
		switch {
		case !dashes && f.s == "--":
			dashes = true
			continue
		case !dashes && len(f.s) > 1 && f.s[0] == '-' && !isDigits(f.s[1:]):
			// -L, -P, -e, -@ (bash), -q, -s (zsh). Another word is an
			// operand to zsh (cd -a -b swaps in $PWD) and an error to
			// bash: where it lands is not known.
			if strings.Trim(f.s[1:], "LPe@qs") != "" {
				a.st.cwd = ""
				return
			}
			physical = physical || strings.Contains(f.s, "P")
			continue
		}
		if f.s != "" {
			operands++
		}
		if target == nil {
			target = f
		}
	}
	if operands > 1 {
		// bash fails; zsh replaces the first in $PWD by the second.
		a.st.cwd = ""
		return
	}
	switch {
	case target == nil:
		a.st.cwd = a.home
	case target.s == "-" || target.s == "" || len(target.s) > 1 && (target.s[0] == '+' || target.s[0] == '-') && isDigits(target.s[1:]):
		// cd -, and zsh's cd +N / -N: an entry of the directory stack.
		a.st.cwd = ""
	default:
		p, ok := a.abs(target.s)
		if !ok || strings.Contains(p, Dyn) || physical && hasDotDot(target.s) || dotDotAfterName(target.s) {
			// cd -P resolves symbolic links before "..": where it lands
			// is on the disk, not in the text. So does plain cd when a
			// name before ".." is not a directory (a/nope/..) or when
			// dropping it textually fails: bash then fails, or retries
			// the path as the kernel reads it (a symbolic link's ..).
			a.st.cwd = ""
			return
		}
		// bash's cd is logical: ".." drops the previous element.
		a.st.cwd = path.Clean(p)
		a.checkPath(target.s, false)
	}
}

// readNames handles the variable operands of read and mapfile: each is set
// to a value known only at run time.
func (a *analyzer) readNames(args []field, argOpts, arrayOpts string) string {
	why := ""
	// With no name, read sets REPLY (and zsh's read -A the array reply).
	a.st.setUnknown("REPLY")
	a.st.setUnknown("reply")
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
			// (Each -v counts: bash assigns the last.)
			if w := a.setRunTime(v); w != "" {
				return w
			}
			continue
		}
		return "" // the format (zsh takes a word starting with - for one)
	}
	return ""
}

// zshMath says why a builtin's arguments are not understood when zsh (an
// agent's shell on macOS) evaluates them as arithmetic, where a subscript
// runs $(...) (printf %d 'path[$(touch x)1]'; also shift, exit, return,
// read -t and test's -eq): each must be a known integer.
func (a *analyzer) zshMath(name string, args []field) string {
	var math []field
	switch name {
	case "shift", "exit", "return", "bye", "break", "continue":
		math = args
	case "kill":
		for _, f := range args {
			if !strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "%") {
				math = append(math, f)
			}
		}
	case "read":
		// Each option with a value takes the rest of its word or the next
		// one; zsh evaluates -t, -n, -N, -u and -k's as arithmetic.
	options:
		for i := 0; i < len(args); i++ {
			s := args[i].s
			if !strings.HasPrefix(s, "-") || s == "--" || s == "-" {
				break
			}
			for j := 1; j < len(s); j++ {
				if strings.IndexByte("adinNptuk", s[j]) < 0 {
					continue
				}
				v := field{s: s[j+1:]}
				if j+1 == len(s) {
					if i+1 >= len(args) {
						break options
					}
					i++
					v = args[i]
				}
				if strings.IndexByte("tnNuk", s[j]) >= 0 {
					math = append(math, v)
				}
				break
			}
		}
	case "test", "[":
		for i, f := range args {
			if f.dyn && i+1 < len(args) && !testBinaryOp(args[i+1]) && (i == 0 || !testUnaryOp(args[i-1])) {
				// A run-time word where an operator may stand (-t, whose
				// operand zsh evaluates as arithmetic).
				return name + " with a word only known at run time where an operator may stand"
			}
			switch f.s {
			case "-t":
				if i+1 < len(args) {
					math = append(math, args[i+1])
				}
			case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
				if i > 0 {
					math = append(math, args[i-1])
				}
				if i+1 < len(args) {
					math = append(math, args[i+1])
				}
			}
		}
	case "printf":
		// Only -v NAME and -- are options; zsh takes any other word
		// starting with - for the format.
		i := 0
		for i < len(args) {
			if args[i].s == "--" {
				i++
				break
			}
			if args[i].s == "-v" {
				i += 2
				continue
			}
			if strings.HasPrefix(args[i].s, "-v") {
				i++
				continue
			}
			break
		}
		if i < len(args) && (args[i].dyn || numericFormat(args[i].s)) {
			math = args[i+1:]
		}
	}
	for _, f := range math {
		if strings.HasPrefix(f.s, "-") && !f.dyn && a.arithText(f.s[1:]) {
			continue
		}
		if !f.numeric && (f.dyn || f.glob || !a.arithText(f.s) && !isFloat(f.s)) {
			return name + " given " + displayField(f) + ", which zsh evaluates as arithmetic (a subscript in it runs commands)"
		}
	}
	return ""
}

// testBinaryOp reports a literal binary operator of test.
func testBinaryOp(f field) bool {
	if f.dyn {
		return false
	}
	switch f.s {
	case "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "-a", "-o":
		return true
	}
	return false
}

// testUnaryOp reports a literal unary operator of test (-n, -f, !, ...).
func testUnaryOp(f field) bool {
	return !f.dyn && (f.s == "!" || len(f.s) == 2 && f.s[0] == '-')
}

// isFloat reports a decimal number with a fraction or an exponent (3.14,
// 1e3), which zsh's arithmetic reads as it is.
func isFloat(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && strings.Trim(s, "0123456789.eE+-") == ""
}

// numericFormat reports a printf format with a conversion that takes a
// number (or a * width).
func numericFormat(f string) bool {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ #0123456789.*'$hlLqjzt", f[j]) >= 0 {
			if f[j] == '*' {
				return true
			}
			j++
		}
		if j < len(f) && strings.IndexByte("diouxXeEfFgGaAc", f[j]) >= 0 {
			return true
		}
		i = j
	}
	return false
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
			case 'e', 'u', 'x', 'v', 'C', 'm':
				// (-T, -f, -h, -E, -b mean other things to zsh: -T is
				// cdablevars, which makes `cd HOME` go home.)
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

// hasDotDot reports a ".." element in p.
// dotDotAfterName reports a ".." that follows a name in p (a/.., not ../a):
// bash checks each name before it is a directory, and on failure retries
// the path as the kernel reads it.
func dotDotAfterName(p string) bool {
	name := false
	for _, e := range strings.Split(p, "/") {
		switch e {
		case "..":
			if name {
				return true
			}
		case "", ".":
		default:
			name = true
		}
	}
	return false
}

func hasDotDot(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

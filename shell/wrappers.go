package shell

import (
	"path"
	"strings"
)

// wrapperSpec describes how a command that runs its arguments as a command
// takes its own options, so the inner command can be found.
type wrapperSpec struct {
	shortArg  string   // short options that take a value (-u USER)
	shortOpt  string   // short options whose value is optional and attached (xargs -e[EOF])
	output    byte     // the short option that names a file the wrapper writes (time -o), or 0
	longArg   []string // long options that take a value as the next word (--user USER)
	noCmd     string   // short options after which no command runs (command -v)
	operands  int      // operands before the command (timeout's DURATION)
	envAssign bool     // NAME=VALUE words may precede the command (env, sudo)
	chdir     byte     // the short option that changes directory first (env -C, sudo -D), or 0
	dashOpt   bool     // a lone "-" is an option (env - is env -i)
}

// wrapperSpecs holds the argv wrappers. Read-only.
var wrapperSpecs = map[string]wrapperSpec{
	"sudo": {shortArg: "CDghpRrtTUu", noCmd: "elLvVK", envAssign: true, chdir: 'D',
		longArg: []string{"user", "group", "chdir", "close-from", "host", "prompt", "role", "type", "command-timeout", "other-user", "chroot", "login-class"}},
	"doas":    {shortArg: "uC"},
	"pkexec":  {longArg: []string{"user"}},
	"env":     {shortArg: "uCS", longArg: []string{"unset", "chdir", "split-string"}, envAssign: true, chdir: 'C', dashOpt: true},
	"nice":    {shortArg: "n", longArg: []string{"adjustment"}},
	"nohup":   {},
	"timeout": {shortArg: "sk", longArg: []string{"signal", "kill-after"}, operands: 1},
	"time":    {shortArg: "fo", longArg: []string{"format", "output"}, output: 'o'},
	"command": {noCmd: "vV"},
	"builtin": {},
	"exec":    {shortArg: "a"},
	"xargs": {shortArg: "aEdILnPs", shortOpt: "eil",
		longArg: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}},
	"stdbuf":     {shortArg: "ioe", longArg: []string{"input", "output", "error"}},
	"ionice":     {shortArg: "cn", noCmd: "pPu", longArg: []string{"class", "classdata"}},
	"taskset":    {noCmd: "p", operands: 1},
	"setsid":     {},
	"chroot":     {longArg: []string{"userspec", "groups"}, operands: 1},
	"unbuffer":   {},
	"caffeinate": {shortArg: "tw"},
	"busybox":    {},
	"flock":      {shortArg: "wE", longArg: []string{"timeout", "wait", "conflict-exit-code"}, operands: 1},
	"watch":      {shortArg: "nq", longArg: []string{"interval", "equexit"}},
}

// shellOnly are bash builtins with no program of their name (or, on some
// systems, one that runs them in a child shell). Read-only.
var shellOnly = map[string]bool{
	"builtin": true, "command": true, "eval": true, "export": true, "declare": true, "typeset": true,
	"local": true, "readonly": true, "cd": true, "pushd": true, "popd": true, "dirs": true, "set": true,
	"unset": true, "shift": true, "source": true, ".": true, "alias": true, "unalias": true, "read": true,
	"hash": true, "trap": true, "exit": true, "return": true, "break": true, "continue": true, "let": true,
	"ulimit": true, "umask": true, "wait": true, "jobs": true, "fg": true, "bg": true, "disown": true,
	"shopt": true, "enable": true, "mapfile": true, "readarray": true, "getopts": true, "history": true,
	"fc": true, "suspend": true, "logout": true, "caller": true, "compgen": true, "complete": true,
	"compopt": true, "bind": true, "times": true, "type": true, "exec": true,
}

// dashReads says why a line run by sh (dash on Debian) is read otherwise
// than bash reads it: $'...' (a $ then a quoted string), &> (a background
// job, then a redirection), (( (nested subshells). "" when neither.
func dashReads(s, by string) string {
	for _, z := range [...]string{"$'", `$"`, "&>", "(("} {
		if strings.Contains(s, z) {
			return "not understood: " + by + " with " + z + ", which sh (dash) reads otherwise than bash"
		}
	}
	return ""
}

// shells are the interpreters whose -c STRING is a command line.
func isShell(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash":
		return true
	}
	return false
}

// transparentWrapper reports whether a wrapper only changes how its inner
// command runs (time limit, priority, buffering, session), not who runs it
// or what it is: such a wrapper is judged through its inner command. Not
// transparent: privilege (sudo, doas), argument sources (xargs), repetition
// (watch), other roots (chroot), and command strings (eval, sh -c).
func transparentWrapper(name string) bool {
	switch name {
	case "timeout", "nice", "nohup", "time", "stdbuf", "command", "builtin", "exec", "env",
		"ionice", "setsid", "unbuffer", "caffeinate", "taskset":
		return true
	}
	return false
}

// opaqueWrappers run their arguments (or a command line) in ways not
// unwrapped here; they are a hazard so they never allow.
func opaqueWrapper(name string) bool {
	switch name {
	case "strace", "ltrace", "gdb", "lldb", "valgrind", "perf", "rr", "catchsegv", "script",
		"parallel", "rlwrap", "torsocks", "proxychains", "proxychains4", "firejail", "bwrap",
		"unshare", "nsenter", "faketime", "fakeroot", "systemd-run", "xvfb-run", "dbus-run-session",
		"chrt", "numactl", "cgexec", "sg", "runuser", "su", "tmux", "screen", "expect", "at", "batch",
		"entr", "daemonize", "start-stop-daemon", "with-contenv", "chpst", "sandbox-exec":
		return true
	}
	return false
}

// baseName is argv0's base name, "" when it is not static.
func baseName(f field) string {
	if f.dyn || f.glob || f.expanded || f.s == "" {
		return ""
	}
	if strings.IndexByte(f.s, '/') < 0 {
		return f.s
	}
	return path.Base(f.s)
}

// unwrap reports the inner command(s) of a wrapper as further commands. It
// returns whether fs is a wrapper, and why its payload is not static.
func (a *analyzer) unwrap(fs []field, source, envHazard string, depth int) (bool, string) {
	name := baseName(fs[0])
	if name == "" {
		return false, ""
	}
	args := fs[1:]
	switch {
	case name == "eval":
		return true, a.evalPayload(joinFields(args), depth)
	case isShell(name):
		s, ok := shellCommandString(args)
		if !ok {
			return false, ""
		}
		if name != "bash" && name != "zsh" {
			if why := dashReads(s.s, name+" -c"); why != "" {
				return true, why
			}
		}
		return true, a.payload(s, name+" -c", source, depth)
	case name == "find":
		return a.findExec(args, source, depth)
	case name == "su" || name == "runuser":
		for i, f := range args {
			if v, ok := strings.CutPrefix(f.s, "--command="); ok {
				return true, a.payload(field{s: v, dyn: f.dyn}, name+" -c", source, depth)
			}
			if (f.s == "-c" || f.s == "--command" || f.s == "--session-command") && i+1 < len(args) {
				return true, a.payload(args[i+1], name+" -c", source, depth)
			}
		}
		return false, ""
	}
	spec, ok := wrapperSpecs[name]
	if !ok {
		return false, ""
	}
	if name == "flock" {
		// flock [options] FILE -c COMMAND: -c only right after the file.
		k := 0
		for k < len(args) && strings.HasPrefix(args[k].s, "-") {
			if args[k].s == "-w" || args[k].s == "-E" || args[k].s == "--timeout" || args[k].s == "--wait" || args[k].s == "--conflict-exit-code" {
				k++
			}
			k++
		}
		if k+1 < len(args) && (args[k+1].s == "-c" || args[k+1].s == "--command") {
			if k+2 >= len(args) {
				return true, "not understood: flock -c without its command"
			}
			if why := dashReads(args[k+2].s, "flock -c"); why != "" {
				return true, why
			}
			return true, a.payload(args[k+2], "flock -c", source, depth)
		}
	}
	inner, opt, dyn := splitWrapper(args, spec)
	if dyn {
		return true, "the " + name + " options are not static"
	}
	if opt.split != nil {
		// env -S STRING: the string is split into words (and the rest
		// appended). env has its own escapes (\_ separates words, \c
		// ends the string, ${VAR} expands) and comments; only text where
		// it and bash agree is analyzed.
		if strings.ContainsAny(opt.split.s, "\\$#;|&<>()`\n*?[{~") {
			// env splits on blanks and quotes only: ; | && are words to
			// it, not a shell's separators.
			return true, "not understood: env -S with escapes, variables, comments or shell operators (env reads them as words of its own)"
		}
		if strings.HasPrefix(strings.TrimLeft(opt.split.s, " \t\n"), "-") {
			return true, "not understood: env -S whose string starts with an option (env reads its own options from it)"
		}
		s := *opt.split
		for _, f := range inner {
			// The words after the string are words, not shell text: only
			// those that read the same as text are appended (a quoted '#'
			// or 'a b' would not).
			if f.dyn || f.glob || f.s == "" || strings.ContainsAny(f.s, " \t\n'\"#;|&<>()$`\\*?[]~{}=%!^") {
				return true, "not understood: env -S followed by words that are not plain text"
			}
			s.s += " " + f.s
		}
		if opt.chdir != nil {
			defer a.runIn(*opt.chdir)() // env -C DIR -S 'cmd' runs cmd in DIR
		}
		return true, a.payload(s, "env -S", source, depth)
	}
	if opt.noCmd {
		return false, ""
	}
	if envHazard == "" {
		envHazard = opt.envHazard
	}
	if len(inner) == 0 && (name == "sudo" || name == "doas") {
		for _, f := range args {
			if f.s == "--shell" || f.s == "--login" || strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "--") && strings.ContainsAny(f.s, "si") {
				// A shell with no command reads its commands from stdin.
				return true, "not understood: " + name + " -s or -i starts a shell that reads commands from its input"
			}
		}
	}
	if len(inner) == 0 && name != "xargs" {
		return false, ""
	}
	if name != "command" && name != "builtin" && name != "exec" && len(inner) > 0 && shellOnly[inner[0].s] && !inner[0].dyn {
		// A program runs its command as a program: a shell builtin there
		// is no such program (or one in a child shell), and changes
		// nothing here (nice builtin export x=...).
		return true, "not understood: " + name + " runs the shell builtin " + inner[0].s + " as a program"
	}
	if name == "watch" && !opt.exec {
		// watch runs `sh -c "ARGS"` (dash on Debian).
		if why := dashReads(joinFields(inner).s, "watch"); why != "" {
			return true, why
		}
		return true, a.payload(joinFields(inner), "watch", source, depth)
	}
	if name == "busybox" && strings.HasPrefix(inner[0].s, "-") {
		return false, ""
	}
	if depth >= maxDepth {
		return true, "wrappers nested too deeply"
	}
	if opt.output != nil {
		// time -o FILE writes FILE (with text -f chooses).
		a.writeTarget(name+" -o", *opt.output)
	}
	if opt.chdir != nil {
		defer a.runIn(*opt.chdir)() // the command runs in another directory
	}
	if name == "xargs" {
		own := args[:len(args)-len(inner)] // xargs's own options, before its command
		repl, argFiles, why := xargsOptions(own)
		if why != "" {
			return true, "not understood: " + why
		}
		for _, f := range argFiles {
			a.addRead(f, "xargs -a", false) // xargs -a FILE reads its arguments from FILE
		}
		if len(inner) == 0 {
			inner = []field{{s: "echo"}} // xargs runs echo by default
		}
		inner = xargsInner(repl, inner)
	}
	if name == "exec" {
		for _, f := range args[:len(args)-len(inner)] {
			if strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "--") && strings.ContainsRune(f.s, 'a') {
				// git picks its subcommand from argv[0] (git-remote-ext).
				return true, "not understood: exec -a runs the command under another name"
			}
		}
	}
	a.inner(inner, source, name, envHazard, depth+1)
	return true, ""
}

// runIn moves the tracked directory to dir (env -C, sudo -D) for what a
// wrapper runs, unknown when dir is; it returns what puts it back.
func (a *analyzer) runIn(dir field) func() {
	saved := a.st.cwd
	a.st.cwd = ""
	if !dir.dyn && !dir.glob {
		if p, ok := a.abs(dir.s); ok {
			a.st.cwd = p
		}
	}
	return func() { a.st.cwd = saved }
}

// wrapperOpts is what splitWrapper learnt from a wrapper's options.
type wrapperOpts struct {
	noCmd     bool   // an option that means no command runs
	exec      bool   // watch -x
	split     *field // env -S STRING
	chdir     *field // env -C DIR, sudo -D DIR: where the command runs
	output    *field // time -o FILE: a file the wrapper writes
	envHazard string // a dangerous NAME=VALUE before the command
}

// splitWrapper skips a wrapper's options, NAME=VALUE words and operands, and
// returns the inner argv. dyn reports an option word that is not static, so
// the inner command cannot be told apart.
func splitWrapper(args []field, spec wrapperSpec) (inner []field, opt wrapperOpts, dyn bool) {
	i := 0
options:
	for i < len(args) {
		f := args[i]
		s := f.s
		if f.dyn || f.glob || f.expanded {
			if strings.HasPrefix(s, "-") || i == 0 {
				return nil, opt, true
			}
			break
		}
		switch {
		case s == "--":
			i++
			break options
		case s == "-" && spec.dashOpt:
			i++
		case len(s) < 2 || s[0] != '-':
			break options
		case s[1] == '-':
			name, val, hasVal := strings.Cut(s[2:], "=")
			i++
			// getopt_long takes any unique prefix of a long option.
			longs := spec.longArg
			if spec.envAssign && !contains(longs, "split-string") {
				longs = append(longs[:len(longs):len(longs)], "split-string")
			}
			full, n := "", 0
			for _, l := range longs {
				if l == name {
					full, n = l, 1
					break
				}
				if strings.HasPrefix(l, name) {
					full = l
					n++
				}
			}
			if n > 1 {
				return nil, opt, true // ambiguous: the wrapper fails, or means another option
			}
			if n == 1 {
				name = full
			}
			if len(name) >= 2 && strings.HasPrefix("exec", name) && !spec.envAssign && contains(spec.longArg, "interval") {
				opt.exec = true // watch --exec, --ex
			}
			if name == "split-string" {
				v := val
				if !hasVal {
					if i >= len(args) {
						return nil, opt, false
					}
					opt.split = &args[i]
					i++
				} else {
					opt.split = &field{s: v}
				}
				return args[i:], opt, false
			}
			if name == "chdir" || name == "output" && spec.output != 0 {
				v := &field{s: val}
				if !hasVal {
					v = nil
					if i < len(args) {
						v = &args[i]
					}
				}
				if name == "chdir" {
					opt.chdir = v
				} else {
					opt.output = v
				}
			}
			if name == "process-slot-var" {
				return nil, opt, true // sets a variable in the command's environment
			}
			if !hasVal && contains(spec.longArg, name) {
				if i < len(args) && (args[i].glob || args[i].dyn && args[i].split) {
					return nil, opt, true // it may be several words
				}
				i++
			}
		default:
			i++
			for j := 1; j < len(s); j++ {
				c := s[j]
				if strings.IndexByte(spec.noCmd, c) >= 0 {
					opt.noCmd = true
					return nil, opt, false
				}
				if c == 'x' {
					opt.exec = true
				}
				if strings.IndexByte(spec.shortOpt, c) >= 0 {
					break // the rest of the word is its value
				}
				if strings.IndexByte(spec.shortArg, c) < 0 {
					continue
				}
				var v *field
				if j+1 < len(s) {
					v = &field{s: s[j+1:]}
				} else if i < len(args) {
					v = &args[i]
					if v.glob || v.dyn && v.split {
						return nil, opt, true // it may be several words
					}
					i++
				}
				if c == 'S' && v != nil && spec.envAssign {
					opt.split = v
					return args[i:], opt, false
				}
				if c == spec.chdir && v != nil {
					opt.chdir = v
				}
				if c == spec.output && spec.output != 0 {
					opt.output = v
				}
				break
			}
		}
	}
	if spec.envAssign {
		for i < len(args) && isAssignWord(args[i].s) {
			if args[i].split || args[i].glob {
				return nil, opt, true // NAME=$x may split into more words
			}
			if n, _, _ := strings.Cut(args[i].s, "="); opt.envHazard == "" {
				if why := assignable(n, true); why != "" {
					opt.envHazard = "assignment " + why
				}
			}
			i++
		}
	}
	for k := i; k < i+spec.operands && k < len(args); k++ {
		if args[k].glob || args[k].dyn && args[k].split {
			return nil, opt, true // timeout's DURATION may split into more words
		}
	}
	i += spec.operands
	if i >= len(args) {
		return nil, opt, false
	}
	return args[i:], opt, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isAssignWord reports NAME=VALUE.
func isAssignWord(s string) bool {
	eq := strings.IndexByte(s, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// joinFields joins words with spaces, as eval and watch do.
func joinFields(fs []field) field {
	var out field
	n := 0
	for _, f := range fs {
		n += len(f.s) + 1
		out.dyn = out.dyn || f.dyn || f.glob
	}
	var b strings.Builder
	b.Grow(n)
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.s)
	}
	out.s = b.String()
	return out
}

// shellCommandString finds the STRING of `sh [options] -c STRING [name [args]]`.
func shellCommandString(args []field) (field, bool) {
	cmd := false
	for i := 0; i < len(args); i++ {
		f := args[i]
		s := f.s
		if f.dyn || f.glob || f.expanded {
			if cmd {
				return f, true
			}
			if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
				return field{s: Dyn, dyn: true}, true // cannot tell: maybe -c
			}
			return field{}, false
		}
		switch {
		case s == "--" || s == "-":
			if cmd && i+1 < len(args) {
				return args[i+1], true
			}
			return field{}, false
		case strings.HasPrefix(s, "--"):
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
		case len(s) > 1 && (s[0] == '-' || s[0] == '+'):
			for j := 1; j < len(s); j++ {
				switch s[j] {
				case 'c':
					cmd = true
				case 'o', 'O':
					i++ // -o OPTION
				}
			}
		default:
			if cmd {
				return f, true
			}
			return field{}, false // a script file or nothing: not a command string
		}
	}
	if cmd {
		return field{}, false // -c without a string: bash errors out
	}
	return field{}, false
}

// payload parses a wrapper's command-line string as the script of a new
// shell process: it starts in the same directory, with none of this
// line's unexported variables.
func (a *analyzer) payload(s field, label, source string, depth int) string {
	if s.dyn || s.glob {
		return "the " + label + " payload is not static"
	}
	if depth >= maxDepth {
		return "wrappers nested too deeply"
	}
	if why := unsafeText(s.s); why != "" {
		a.unsafe("the " + label + " payload has " + why)
	}
	saved := a.st
	a.st = &state{cwd: saved.cwd}
	a.script(s.s, label, depth+1)
	a.st = saved
	return ""
}

// evalPayload parses eval's arguments as a script run by this very shell.
func (a *analyzer) evalPayload(s field, depth int) string {
	if s.dyn || s.glob {
		return "the eval payload is not static"
	}
	if depth >= maxDepth {
		return "wrappers nested too deeply"
	}
	if why := unsafeText(s.s); why != "" {
		a.unsafe("the eval payload has " + why)
	}
	a.script(s.s, "eval", depth+1)
	return ""
}

// inner judges a wrapper's inner command. Only `command` and `builtin` run
// builtins; the others execute a program.
func (a *analyzer) inner(fs []field, source, wrapper, envHazard string, depth int) {
	if len(fs) == 0 {
		return
	}
	if (wrapper == "command" || wrapper == "builtin") && strings.IndexByte(fs[0].s, '/') < 0 && !fs[0].dyn {
		a.simple(fs, source, envHazard, stdinNone, nil, wrapper, depth)
		return
	}
	if fs[0].dyn || fs[0].glob || fs[0].expanded || fs[0].s == "" {
		a.recordDyn(fs, source, wrapper, "the command name is not static")
		return
	}
	if why := zshCommandWord(fs[0].s); why != "" {
		a.recordDyn(fs, source, wrapper, "not understood: "+why)
		return
	}
	a.external(fs, source, envHazard, stdinNone, nil, wrapper, depth)
}

// findExec reports the commands of find's -exec, -execdir, -ok and -okdir
// actions, each up to its `;` or `+`; `{}` stands for the names found.
func (a *analyzer) findExec(args []field, source string, depth int) (bool, string) {
	found := false
	for i := 0; i < len(args); i++ {
		if !findExec(args[i].s) {
			continue
		}
		label := "find " + args[i].s
		names := findNames(args, i)
		j := findExecEnd(args, i+1, args[i].s)
		found = true
		if j > i+1 {
			if depth >= maxDepth {
				return true, "wrappers nested too deeply"
			}
			inner := make([]field, 0, j-i-1)
			for _, f := range args[i+1 : j] {
				switch {
				case f.s == "{}" && !f.dyn:
					n := names
					if j < len(args) && args[j].s == "+" {
						n.quoted = false // `{} +` stands for many names
					}
					inner = append(inner, n)
				case strings.Contains(f.s, "{}"):
					inner = append(inner, dynField())
				default:
					inner = append(inner, f)
				}
			}
			if args[i].s == "-execdir" || args[i].s == "-okdir" {
				// It runs in the directory of each name found: relative
				// paths in it are not relative to this directory.
				saved := a.st.cwd
				a.st.cwd = ""
				a.inner(inner, source, label, "", depth+1)
				a.st.cwd = saved
			} else {
				a.inner(inner, source, label, "", depth+1)
			}
		}
		i = j
	}
	return found, ""
}

// xargsLongs are GNU xargs's long options: '=' takes a value, '?' an
// optional one (only after '='), ' ' none.
var xargsLongs = map[string]byte{
	"arg-file": '=', "delimiter": '=', "eof": '?', "replace": '?', "max-lines": '?', "max-args": '=',
	"max-procs": '=', "max-chars": '=', "process-slot-var": '=', "null": ' ', "no-run-if-empty": ' ',
	"interactive": ' ', "verbose": ' ', "exit": ' ', "show-limits": ' ', "open-tty": ' ', "help": ' ', "version": ' ',
}

// xargsOptions reads xargs's own options as getopt does (bundles, values
// glued or in the next word, unique prefixes of long options): the
// replacement string of -I/-i/--replace ("" when none), the files -a names,
// and why they are not understood.
func xargsOptions(own []field) (repl string, argFiles []field, why string) {
	for i := 0; i < len(own); i++ {
		f := own[i]
		s := f.s
		if f.dyn || f.glob {
			return "", nil, "an xargs option only known at run time"
		}
		switch {
		case s == "--":
			return repl, argFiles, ""
		case strings.HasPrefix(s, "--"):
			name, val, hasVal := strings.Cut(s[2:], "=")
			full := ""
			for l := range xargsLongs {
				if l == name {
					full = l
					break
				}
				if strings.HasPrefix(l, name) {
					if full != "" {
						return "", nil, "ambiguous xargs option --" + name
					}
					full = l
				}
			}
			if full == "" {
				return "", nil, "xargs option --" + name
			}
			if xargsLongs[full] == '=' && !hasVal {
				if i+1 >= len(own) {
					return "", nil, "xargs option --" + full + " without its value"
				}
				i++
				val = own[i].s
				hasVal = true
			}
			switch full {
			case "arg-file":
				argFiles = append(argFiles, field{s: val})
			case "replace":
				repl = "{}"
				if hasVal {
					repl = val
				}
			case "max-lines", "max-args":
				repl = ""
			}
		case len(s) > 1 && s[0] == '-':
			for k := 1; k < len(s); k++ {
				c := s[k]
				rest := s[k+1:]
				switch {
				case strings.IndexByte("adEILnPs", c) >= 0:
					val := field{s: rest}
					if rest == "" {
						if i+1 >= len(own) {
							return "", nil, "xargs option -" + string(c) + " without its value"
						}
						i++
						val = own[i]
					}
					switch c {
					case 'a':
						argFiles = append(argFiles, val)
					case 'I':
						repl = val.s
					case 'L', 'n':
						repl = "" // after -I, it appends again (GNU)
					}
					k = len(s)
				case strings.IndexByte("eil", c) >= 0:
					switch c {
					case 'i':
						repl = "{}"
						if rest != "" {
							repl = rest
						}
					case 'l':
						repl = ""
					}
					k = len(s)
				case strings.IndexByte("0oprtx", c) >= 0:
				default:
					return "", nil, "xargs option -" + string(c)
				}
			}
		}
	}
	return repl, argFiles, ""
}

// xargsInner returns the command xargs runs: with a replacement string,
// words holding it become run-time words; otherwise words read from its
// input are appended.
func xargsInner(repl string, inner []field) []field {
	out := make([]field, 0, len(inner)+1)
	if repl == "" {
		out = append(out, inner...)
		words := dynField()
		words.split = true // any number of words
		return append(out, words)
	}
	for i, f := range inner {
		if i > 0 && strings.Contains(f.s, repl) {
			out = append(out, dynField())
			continue
		}
		out = append(out, f)
	}
	return out
}

// isLongPrefix reports whether word is --X with X a non-empty prefix of
// name (getopt_long's abbreviation).
func isLongPrefix(word, name string) bool {
	x, ok := strings.CutPrefix(word, "--")
	return ok && x != "" && strings.HasPrefix(name, x)
}

package shell

import (
	"strings"
)

// hazard is one way an otherwise allowed command can execute code, write
// files or change later commands. A hazard turns the gate's allow into ask.
type hazard struct {
	name  string                  // shown to people, e.g. "find -delete"
	cmds  []string                // argv0 base names it applies to
	check func(args []field) bool // args are argv[1:]
}

// hazards is the one table of hazards; each entry has a row in
// TestHazards. Read-only.
var hazards = []hazard{
	{"find -delete", []string{"find"}, func(a []field) bool { return hasArg(a, "-delete") }},
	{"find writes a file", []string{"find"}, func(a []field) bool { return hasArg(a, "-fprint", "-fprint0", "-fprintf", "-fls") }},
	{"git config override", []string{"git"}, gitConfigOverride},
	{"git --exec-path", []string{"git"}, func(a []field) bool {
		return anyGlobal(a, func(s string) bool { return s == "--exec-path" || strings.HasPrefix(s, "--exec-path=") })
	}},
	{"git --output", []string{"git"}, func(a []field) bool {
		return hasPrefixArg(gitArgs(a), "--output", "--output-directory") || gitSub(a) == "format-patch" && hasArg(gitArgs(a), "-o")
	}},
	{"git external diff or textconv", []string{"git"}, func(a []field) bool {
		return hasPrefixArg(gitArgs(a), "--ext-diff", "--textconv", "--extcmd", "--tool")
	}},
	{"git config write", []string{"git"}, gitConfigWrite},
	{"git alias", []string{"git"}, func(a []field) bool { return gitSub(a) == "alias" }},
	{"git runs a command", []string{"git"}, gitRunsCommand},
	{"gsed -i", []string{"gsed"}, func(a []field) bool { return sedHazard(a) == "in-place" }},
	{"gsed script executes or writes", []string{"gsed"}, func(a []field) bool { return sedHazard(a) == "script" }},
	{"sort -o", []string{"sort"}, func(a []field) bool {
		return shortFlag(a, 'o', "") || hasPrefixArg(a, "--output", "--compress-program")
	}},
	{"rg runs a preprocessor", []string{"rg"}, func(a []field) bool {
		return shortFlag(a, 'z', "efgmrtTAB") || hasPrefixArg(a, "--search-zip", "--pre", "--hostname-bin")
	}},
	{"tree -o", []string{"tree"}, func(a []field) bool { return hasPrefixArg(a, "-o", "--output") }},
	{"base64 -o", []string{"base64"}, func(a []field) bool { return hasPrefixArg(a, "-o", "--output") }},
	{"tar runs a program", []string{"tar", "gtar", "bsdtar"}, func(a []field) bool {
		return longPrefixArg(a, "to-command", "use-compress-program", "checkpoint-action", "info-script",
			"new-volume-script", "rsh-command", "rmt-command", "transform", "xform") || hasPrefixArg(a, "--to-command", "--use-compress-program", "--checkpoint-action", "--info-script",
			"--new-volume-script", "--rsh-command", "--rmt-command", "-I", "-F") || tarOldStyle(a)
	}},
	{"rsync runs a program", []string{"rsync"}, func(a []field) bool {
		return shortFlag(a, 'e', "fBTM") || hasPrefixArg(a, "--rsh", "--rsync-path") || longPrefixArg(a, "rsh", "rsync-path", "write-batch", "only-write-batch", "log-file", "temp-dir", "backup-dir", "partial-dir", "compare-dest", "copy-dest", "link-dest")
	}},
	{"curl writes a file", []string{"curl"}, func(a []field) bool {
		return shortFlag(a, 'o', "dHuXxAeEFKhrTwyYzbc") || shortFlag(a, 'K', "dHuXxAeEFhrTwyYzbco") ||
			hasPrefixArg(a, "--output", "--config", "--dump-header", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--libcurl", "-D", "-c")
	}},
	{"time -o", []string{"time"}, func(a []field) bool { return hasPrefixArg(a, "-o", "--output") || longPrefixArg(a, "output") }},
	{"alias", []string{"alias"}, func([]field) bool { return true }},
	{"fd runs a command", []string{"fd", "fdfind"}, func(a []field) bool {
		return shortFlag(a, 'x', "edtEScjh") || shortFlag(a, 'X', "edtEScjh") || longPrefixArg(a, "exec", "exec-batch")
	}},
	{"zip runs a command", []string{"zip"}, func(a []field) bool { return hasArg(a, "-TT") || longPrefixArg(a, "unzip-command") }},
	{"make runs other code", []string{"make", "gmake"}, func(a []field) bool {
		for _, f := range a {
			if isAssignWord(f.s) {
				return true // a variable override (SHELL=..., CC=...)
			}
		}
		return shortFlag(a, 'E', "") || shortFlag(a, 'f', "") || shortFlag(a, 'C', "") || shortFlag(a, 'I', "") ||
			longPrefixArg(a, "eval", "file", "makefile", "directory", "include-dir")
	}},
	{"npm config runs code", []string{"npm", "npx", "pnpm", "yarn"}, func(a []field) bool {
		return longPrefixArg(a, "node-options", "script-shell", "userconfig", "globalconfig", "shell", "call", "prefix", "cache", "registry") ||
			hasArg(a, "-c")
	}},
	{"ssh option runs a program", []string{"ssh", "scp", "sftp"}, func(a []field) bool {
		for _, f := range a {
			if strings.HasPrefix(f.s, "-o") || f.s == "-F" || strings.HasPrefix(f.s, "-F") {
				return true
			}
		}
		return false
	}},
	{"opaque exec wrapper", nil, nil}, // checked by name in hazardOf
	{"interpreter code flag", nil, nil},
	{"unquoted glob for an exec-capable tool", []string{"rg", "find", "tar", "rsync", "git", "xargs", "sed", "zip", "7z", "curl", "wget", "env"},
		func(a []field) bool {
			for _, f := range a {
				if f.glob {
					return true // a file named `--pre=sh` or `-exec` would become an option
				}
			}
			return false
		}},
}

// hazardOf names the first hazard of a command, "" for none.
func hazardOf(fs []field, argv []string) string {
	name := baseName(fs[0])
	if name == "" {
		return ""
	}
	args := fs[1:]
	if opaqueWrapper(name) {
		return "opaque exec wrapper"
	}
	if codeFlagArgs(name, argv[1:]) {
		return "interpreter code flag"
	}
	for _, h := range hazardsByName[name] {
		if h.check(args) {
			return h.name
		}
	}
	return ""
}

// hazardsByName indexes the hazards table by program name, in table order.
// Read-only after package initialization.
var hazardsByName = func() map[string][]*hazard {
	m := make(map[string][]*hazard)
	for i := range hazards {
		h := &hazards[i]
		if h.check == nil {
			continue
		}
		for _, c := range h.cmds {
			m[c] = append(m[c], h)
		}
	}
	return m
}()

// dangerousEnv reports environment variables whose value runs code or
// changes which program runs (a dynamic loader, a PATH, a pager, an editor,
// an interpreter's startup options).
func dangerousEnv(name string) bool {
	switch name {
	case "PATH", "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "BASH_ENV", "ENV",
		"PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "SHELLOPTS", "BASHOPTS", "IFS", "CDPATH", "GLOBIGNORE",
		"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT", "PYTHONWARNINGS",
		"NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB",
		"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
		"HOME", "XDG_CONFIG_HOME", "ZDOTDIR", "INPUTRC", "LESSOPEN", "LESSCLOSE", "LESSKEY",
		"SSH_ASKPASS", "SUDO_ASKPASS", "BROWSER", "SHELL", "TMUX", "TERMINAL",
		"CC", "CXX", "LD", "AR", "MAKEFLAGS", "MAKE", "GCONV_PATH", "HOSTALIASES", "RESOLV_HOST_CONF",
		"RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTDOCFLAGS", "RUSTFLAGS",
		"GOFLAGS", "GOTOOLCHAIN", "CGO_CFLAGS", "CGO_LDFLAGS", "GOENV", "GOROOT",
		"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PHPRC", "PHP_INI_SCAN_DIR", "LUA_INIT", "R_PROFILE_USER", "TCLLIBPATH":
		return true
	case "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
		"GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS":
		return false
	}
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "BASH_FUNC_", "NPM_CONFIG_", "npm_config_", "YARN_", "CARGO_", "MALLOC_", "GLIBC_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return strings.HasSuffix(name, "_COMMAND") || strings.HasSuffix(name, "_EDITOR") || strings.HasSuffix(name, "_PAGER") ||
		strings.HasSuffix(name, "_OPTIONS") && strings.HasPrefix(name, "JAVA")
}

// hasArg reports an argument equal to one of names.
func hasArg(a []field, names ...string) bool {
	for _, f := range a {
		for _, n := range names {
			if f.s == n {
				return true
			}
		}
	}
	return false
}

// hasPrefixArg reports an argument that is one of opts, or starts with it
// followed by "=" (long options) or by a value (short options like -ofile).
func hasPrefixArg(a []field, opts ...string) bool {
	for _, f := range a {
		if f.s == "--" {
			return false
		}
		for _, o := range opts {
			if !strings.HasPrefix(f.s, o) {
				continue
			}
			rest := f.s[len(o):]
			if rest == "" || rest[0] == '=' || !strings.HasPrefix(o, "--") {
				return true
			}
		}
	}
	return false
}

// longPrefixArg reports a long option that getopt_long would read as one
// of names: any prefix of it (an ambiguous one makes the program fail,
// which is fine to ask about too).
func longPrefixArg(a []field, names ...string) bool {
	for _, f := range a {
		if f.s == "--" {
			return false
		}
		opt, ok := strings.CutPrefix(f.s, "--")
		if !ok || opt == "" {
			continue
		}
		opt, _, _ = strings.Cut(opt, "=")
		for _, n := range names {
			if strings.HasPrefix(n, opt) {
				return true
			}
		}
	}
	return false
}

// shortFlag reports the short option c in a cluster such as -iz, stopping at
// a short option of argOpts, whose value is the rest of the cluster.
func shortFlag(a []field, c byte, argOpts string) bool {
	for _, f := range a {
		s := f.s
		if s == "--" {
			return false
		}
		if len(s) < 2 || s[0] != '-' || s[1] == '-' {
			continue
		}
		for j := 1; j < len(s); j++ {
			if s[j] == c {
				return true
			}
			if strings.IndexByte(argOpts, s[j]) >= 0 {
				break
			}
		}
	}
	return false
}

// tarOldStyle reports tar's old-style first argument (`tar xIf ...` or
// `tar -xI zstd`) carrying I (compress program) or F (volume script).
func tarOldStyle(a []field) bool {
	if len(a) == 0 {
		return false
	}
	s := a[0].s
	if strings.HasPrefix(s, "--") {
		return false
	}
	return strings.ContainsAny(strings.TrimPrefix(s, "-"), "IF") || shortFlag(a, 'I', "fCbgHKLNTVX") || shortFlag(a, 'F', "fCbgHKLNTVX")
}

// gitGlobalEnd returns the index in args (argv[1:]) of git's subcommand,
// after its global options.
func gitGlobalEnd(a []field) int {
	i := 0
	for i < len(a) {
		s := a[i].s
		switch s {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--list-cmds", "--attr-source":
			i += 2
			continue
		case "--no-pager", "-P", "-p", "--paginate", "--bare", "--no-replace-objects", "--literal-pathspecs",
			"--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch",
			"--no-advice", "--exec-path", "--html-path", "--man-path", "--info-path", "--version", "--help":
			i++
			continue
		}
		if strings.HasPrefix(s, "--") && strings.IndexByte(s, '=') > 0 {
			i++
			continue
		}
		break
	}
	return i
}

func gitSub(a []field) string {
	if i := gitGlobalEnd(a); i < len(a) {
		return a[i].s
	}
	return ""
}

// gitArgs returns the subcommand's arguments.
func gitArgs(a []field) []field {
	i := gitGlobalEnd(a)
	if i+1 >= len(a) {
		return nil
	}
	return a[i+1:]
}

func anyGlobal(a []field, pred func(string) bool) bool {
	for _, f := range a[:min(gitGlobalEnd(a), len(a))] {
		if pred(f.s) {
			return true
		}
	}
	return false
}

// gitConfigOverride reports -c NAME=VALUE and --config-env: config keys such
// as core.fsmonitor, core.pager or alias.* run programs.
func gitConfigOverride(a []field) bool {
	return anyGlobal(a, func(s string) bool {
		return s == "-c" || s == "--config-env" || strings.HasPrefix(s, "--config-env=")
	})
}

// gitConfigWrite reports every `git config` form except plain reads.
func gitConfigWrite(a []field) bool {
	if gitSub(a) != "config" {
		return false
	}
	args := gitArgs(a)
	read := false
	operands := 0
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "get" || s == "list" || s == "--get" || s == "--get-all" || s == "--get-regexp" || s == "--get-urlmatch" ||
			s == "--get-color" || s == "--get-colorbool" || s == "--list" || s == "-l" || s == "--show-origin" || s == "--show-scope" ||
			s == "--name-only" || s == "-z" || s == "--null" || s == "--includes" || s == "--no-includes" ||
			s == "--global" || s == "--system" || s == "--local" || s == "--worktree" || s == "--bool" || s == "--int" ||
			s == "--path" || s == "--type" || strings.HasPrefix(s, "--type=") || s == "--default" || strings.HasPrefix(s, "--default="):
			if s == "get" || s == "list" || strings.HasPrefix(s, "--get") || s == "--list" || s == "-l" {
				read = true
			}
			if s == "--type" || s == "--default" {
				i++
			}
		case s == "-f" || s == "--file" || s == "--blob":
			i++
		case strings.HasPrefix(s, "--file=") || strings.HasPrefix(s, "--blob="):
		case strings.HasPrefix(s, "-"):
			return true // --add, --unset, --replace-all, --edit, --rename-section, ...
		default:
			operands++
		}
	}
	if read {
		return false
	}
	return operands != 1 // `git config KEY` reads; KEY VALUE writes
}

// gitRunsCommand reports git subcommands that run a command given on the
// command line.
func gitRunsCommand(a []field) bool {
	args := gitArgs(a)
	switch gitSub(a) {
	case "submodule":
		return hasArg(args, "foreach")
	case "bisect":
		return hasArg(args, "run")
	case "rebase":
		return hasPrefixArg(args, "--exec", "-x")
	case "filter-branch", "filter-repo", "difftool", "mergetool", "daemon", "instaweb", "credential", "upload-pack", "receive-pack", "web--browse":
		return true
	case "clone":
		return hasPrefixArg(args, "--upload-pack", "--receive-pack", "--exec", "-u")
	case "fetch", "pull", "push", "ls-remote", "archive", "submodule--helper":
		return hasPrefixArg(args, "--upload-pack", "--receive-pack", "--exec")
	case "grep":
		return hasPrefixArg(args, "--open-files-in-pager", "-O")
	}
	return false
}

// sedHazard reports "in-place" for sed -i, "script" for a script that may
// execute or write files (or cannot be read), "" otherwise.
func sedHazard(a []field) string {
	var scripts []string
	sandbox, haveScript := false, false
	script := ""
	for i := 0; i < len(a); i++ {
		s := a[i].s
		switch {
		case s == "--":
			if !haveScript && i+1 < len(a) {
				script, haveScript = a[i+1].s, true
			}
			i = len(a)
		case strings.HasPrefix(s, "--"):
			name, val, hasVal := strings.Cut(s[2:], "=")
			switch {
			case strings.HasPrefix("in-place", name) && len(name) >= 2:
				return "in-place"
			case name == "sandbox":
				sandbox = true
			case name == "expression" || strings.HasPrefix("expression", name) && len(name) >= 2:
				if !hasVal && i+1 < len(a) {
					i++
					val = a[i].s
				}
				scripts = append(scripts, val)
			case name == "file" || strings.HasPrefix("file", name) && len(name) >= 2:
				return "script" // the script is in a file we do not read
			case name == "line-length":
				if !hasVal {
					i++
				}
			}
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				switch s[j] {
				case 'i':
					return "in-place"
				case 'f':
					return "script"
				case 'e', 'l':
					v := s[j+1:]
					if v == "" && i+1 < len(a) {
						i++
						v = a[i].s
					}
					if s[j] == 'e' {
						scripts = append(scripts, v)
					}
					j = len(s)
				}
			}
		default:
			if !haveScript && len(scripts) == 0 {
				script, haveScript = s, true
			}
		}
	}
	if sandbox {
		return ""
	}
	if haveScript && len(scripts) == 0 {
		scripts = append(scripts, script)
	}
	for _, sc := range scripts {
		if strings.Contains(sc, Dyn) || sedScriptUnsafe(sc) {
			return "script"
		}
	}
	return ""
}

// sedScriptUnsafe reports a sed script that may execute commands (e, s///e)
// or write files (w, W, s///w); anything it cannot parse counts as unsafe.
func sedScriptUnsafe(s string) bool {
	i, n := 0, len(s)
	skipBlanks := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	for i < n {
		switch s[i] {
		case ' ', '\t', '\n', ';':
			i++
			continue
		case '#':
			for i < n && s[i] != '\n' {
				i++
			}
			continue
		}
		var ok bool
		if i, ok = sedAddr(s, i); !ok {
			return true
		}
		skipBlanks()
		if i < n && s[i] == ',' {
			i++
			skipBlanks()
			if i, ok = sedAddr(s, i); !ok {
				return true
			}
		}
		skipBlanks()
		for i < n && s[i] == '!' {
			i++
			skipBlanks()
		}
		if i >= n {
			return false
		}
		c := s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F', 'l', 'L', 'q', 'Q':
			skipBlanks()
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < n && s[i] != '\n' && s[i] != ';' {
				i++
			}
		case 'a', 'i', 'c', 'r', 'R':
			// Text or a file to read, up to an unescaped newline.
			for i < n && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case 's':
			if i >= n {
				return true
			}
			d := s[i]
			if d == '\n' || d == '\\' {
				return true
			}
			i++
			for k := 0; k < 2; k++ {
				if i, ok = sedDelimited(s, i, d); !ok {
					return true
				}
			}
			for i < n {
				f := s[i]
				if f == 'e' || f == 'w' || f == 'W' {
					return true
				}
				if f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9' {
					i++
					continue
				}
				break
			}
		case 'y':
			if i >= n {
				return true
			}
			d := s[i]
			i++
			for k := 0; k < 2; k++ {
				if i, ok = sedDelimited(s, i, d); !ok {
					return true
				}
			}
		default: // e, w, W and anything unknown
			return true
		}
	}
	return false
}

// sedAddr skips an optional address at i.
func sedAddr(s string, i int) (int, bool) {
	n := len(s)
	if i >= n {
		return i, true
	}
	switch c := s[i]; {
	case c >= '0' && c <= '9' || c == '+' || c == '~':
		i++
		for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
			i++
		}
	case c == '$':
		i++
	case c == '/' || c == '\\':
		d := byte('/')
		if c == '\\' {
			if i+1 >= n {
				return i, false
			}
			d = s[i+1]
			i++
		}
		var ok bool
		if i, ok = sedDelimited(s, i+1, d); !ok {
			return i, false
		}
		for i < n && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
	}
	return i, true
}

// sedDelimited skips a regular expression or replacement up to and past its
// unescaped delimiter d, treating bracket expressions as opaque.
func sedDelimited(s string, i int, d byte) (int, bool) {
	n := len(s)
	for i < n {
		switch c := s[i]; {
		case c == '\\':
			i += 2
		case c == d:
			return i + 1, true
		case c == '[' && d != '[':
			j := i + 1
			if j < n && s[j] == '^' {
				j++
			}
			if j < n && s[j] == ']' {
				j++
			}
			for j < n && s[j] != ']' {
				j++
			}
			if j >= n {
				return i, false
			}
			i = j + 1
		case c == '\n':
			return i, false
		default:
			i++
		}
	}
	return i, false
}

func isAwkIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// codeFlag reports an interpreter given code on its command line
// (python -c, node -e, perl -e, ...): exact Always patterns only.
func codeFlag(argv []string) bool {
	return codeFlagArgs(baseName(field{s: argv[0], dyn: strings.Contains(argv[0], Dyn)}), argv[1:])
}

func codeFlagArgs(name string, a []string) bool {
	var flags, argOpts, stops string // stops: options after which the rest is the program's
	var long []string
	switch {
	case isPython(name):
		flags, argOpts, stops = "c", "WXQ", "m"
	case name == "node" || name == "nodejs" || name == "bun":
		flags, argOpts, long = "ep", "r", []string{"--eval", "--print"}
	case name == "perl" || name == "ruby":
		flags, argOpts = "eE", "IlmMrx"
	case name == "php":
		flags, argOpts = "rRBE", "cdz"
	case name == "lua" || name == "luajit" || name == "Rscript" || name == "osascript" || name == "tclsh" || name == "jshell":
		flags = "e"
	case name == "pwsh" || name == "powershell":
		flags, long = "cCeE", []string{"-command", "-Command", "-encodedcommand", "-EncodedCommand"}
	case name == "deno":
		return len(a) > 0 && a[0] == "eval"
	default:
		return false
	}
	for i := 0; i < len(a); i++ {
		s := a[i]
		if s == "--" || len(s) < 2 || s[0] != '-' {
			return false // the script or its arguments
		}
		for _, l := range long {
			if s == l || strings.HasPrefix(s, l+"=") {
				return true
			}
		}
		if s[1] == '-' {
			continue
		}
		for j := 1; j < len(s); j++ {
			if strings.IndexByte(flags, s[j]) >= 0 {
				return true
			}
			if strings.IndexByte(stops, s[j]) >= 0 {
				return false
			}
			if strings.IndexByte(argOpts, s[j]) >= 0 {
				if j == len(s)-1 {
					i++ // the option's value is the next word
				}
				break
			}
		}
	}
	return false
}

func isPython(name string) bool {
	rest, ok := strings.CutPrefix(name, "python")
	if !ok {
		rest, ok = strings.CutPrefix(name, "pypy")
	}
	if !ok {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if (rest[i] < '0' || rest[i] > '9') && rest[i] != '.' {
			return false
		}
	}
	return true
}

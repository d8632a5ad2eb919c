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
	{"sort -o", []string{"sort"}, func(a []field) bool {
		// -T DIR leaves temporary files of its input there when killed.
		return shortFlag(a, 'o', "") || shortFlag(a, 'T', "") || hasPrefixArg(a, "--output", "--compress-program") ||
			longPrefixArg(a, "temporary-directory", "compress-program", "output")
	}},
	{"split writes files named from a prefix and a suffix", []string{"split", "csplit", "gsplit", "gcsplit"}, func([]field) bool {
		// csplit -f .gi -b 't/config%.0d' wrote .git/config.
		return true
	}},
	{"rg runs a preprocessor", []string{"rg"}, func(a []field) bool {
		return shortFlag(a, 'z', "efgmrtTAB") || hasPrefixArg(a, "--search-zip", "--pre", "--hostname-bin")
	}},
	{"tree -o", []string{"tree"}, func(a []field) bool { return hasPrefixArg(a, "-o", "--output") }},
	{"base64 -o", []string{"base64"}, func(a []field) bool { return hasPrefixArg(a, "-o", "--output") }},
	{"tar runs a program", []string{"tar", "gtar", "bsdtar"}, func(a []field) bool {
		return longPrefixArg(a, "to-command", "use-compress-program", "checkpoint-action", "info-script",
			"new-volume-script", "rsh-command", "rmt-command", "transform", "xform", "index-file", "volno-file", "files-from") || tarRemote(a) || tarListFile(a) || hasPrefixArg(a, "--to-command", "--use-compress-program", "--checkpoint-action", "--info-script",
			"--new-volume-script", "--rsh-command", "--rmt-command", "-I", "-F") || tarOldStyle(a)
	}},
	{"rsync runs a program", []string{"rsync"}, func(a []field) bool {
		return shortFlag(a, 'e', "fBTM") || hasPrefixArg(a, "--rsh", "--rsync-path") || longPrefixArg(a, "rsh", "rsync-path", "write-batch", "only-write-batch", "log-file", "temp-dir", "backup-dir", "partial-dir", "compare-dest", "copy-dest", "link-dest")
	}},
	{"curl writes a file or reads a local one", []string{"curl"}, func(a []field) bool {
		return shortFlag(a, 'o', "dHuXxAeEFKhrTwyYzbc") || shortFlag(a, 'K', "dHuXxAeEFhrTwyYzbco") ||
			shortFlag(a, 'O', "dHuXxAeEFKhrTwyYzbco") || shortFlag(a, 'J', "dHuXxAeEFKhrTwyYzbco") ||
			hasPrefixArg(a, "--output", "--config", "--dump-header", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--libcurl", "-D", "-c") ||
			longPrefixArg(a, "alt-svc", "hsts", "etag-save", "output-dir", "remote-name", "remote-name-all", "remote-header-name",
				"create-dirs", "write-out", "trace-config", "ssl-sessions", "proto-default", "proto-redir") || curlLocal(a)
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
		// -n is no dry run: $(shell ...) and + lines of the Makefile run.
		return shortFlag(a, 'E', "") || shortFlag(a, 'f', "") || shortFlag(a, 'C', "") || shortFlag(a, 'I', "") ||
			shortFlag(a, 'n', "") || longPrefixArg(a, "eval", "file", "makefile", "directory", "include-dir", "dry-run", "just-print", "recon")
	}},
	{"npm config runs code", []string{"npm", "npx", "pnpm", "yarn"}, func(a []field) bool {
		return longPrefixArg(a, "node-options", "script-shell", "userconfig", "globalconfig", "shell", "call", "prefix", "cache", "registry") ||
			hasArg(a, "-c")
	}},
	{"pytest writes, removes or reads settings elsewhere", []string{"pytest", "py.test"}, func(a []field) bool {
		// --basetemp DIR removes DIR first; -c/-o/--rootdir bring other
		// settings (addopts). argparse takes any unique prefix.
		return longPrefixArg(a, "basetemp", "junitxml", "junit-xml", "log-file", "resultlog", "result-log", "pastebin",
			"config-file", "rootdir", "confcutdir", "override-ini", "debug") ||
			shortFlag(a, 'c', "kmrWnpo") || shortFlag(a, 'o', "kmrWnpc")
	}},
	{"cargo --config, -Z or another manifest or target directory", []string{"cargo"}, func(a []field) bool {
		return longPrefixArg(a, "config", "manifest-path", "target-dir") || hasPrefixArg(a, "-Z")
	}},
	{"go env -w writes go's settings", []string{"go"}, func(a []field) bool {
		return len(a) > 1 && a[0].s == "env" && (hasArg(a[1:], "-w", "-u") || longPrefixArg(a[1:], "w", "u"))
	}},
	{"ssh option runs a program", []string{"ssh", "scp", "sftp"}, func(a []field) bool {
		for _, f := range a {
			if strings.HasPrefix(f.s, "-o") || f.s == "-F" || strings.HasPrefix(f.s, "-F") {
				return true
			}
		}
		return false
	}},
	{"kubectl loads another kubeconfig", []string{"kubectl", "helm", "oc", "kubectx", "kubens", "k9s"}, func(a []field) bool {
		// A kubeconfig's exec credential plugin runs a program before
		// the first request (kubectl get pods --kubeconfig kc.yaml).
		// --server sends the kubeconfig's credentials to another host.
		return hasPrefixArg(a, "--kubeconfig", "--kube-config", "--server", "-s", "--token-file")
	}},
	{"docker loads another configuration", []string{"docker"}, func(a []field) bool {
		// A config directory brings credential helpers and CLI plugins.
		return hasPrefixArg(a, "--config")
	}},
	{"reads more arguments from a response file", []string{"strings", "nm", "objdump", "readelf", "size", "ar", "ranlib",
		"strip", "objcopy", "addr2line", "c++filt", "elfedit", "gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "as",
		"javac", "java", "gcov"}, func(a []field) bool {
		// strings @F reads the names of more files from F.
		for _, f := range a {
			if strings.HasPrefix(f.s, "@") {
				return true
			}
		}
		return false
	}},
	{"man runs programs or reads files it is not given", []string{"man"}, func(a []field) bool {
		// -C brings a config (DEFINE nroff ...); a local file's .so
		// lines read other files; -H, -P, -p run programs.
		return shortFlag(a, 'C', "") || shortFlag(a, 'l', "") || shortFlag(a, 'H', "") || shortFlag(a, 'P', "") ||
			shortFlag(a, 'p', "") || shortFlag(a, 'X', "") || shortFlag(a, 'R', "") ||
			longPrefixArg(a, "config-file", "local-file", "html", "pager", "preprocessor", "gxditview", "recode", "troff-device")
	}},
	{"less reads key bindings or writes a log", []string{"less", "more", "most"}, func(a []field) bool {
		for _, f := range a {
			if strings.HasPrefix(f.s, "+") {
				return true // initial commands
			}
		}
		return shortFlag(a, 'k', "") || shortFlag(a, 'o', "") || shortFlag(a, 'O', "") ||
			longPrefixArg(a, "lesskey-file", "lesskey-src", "lesskey-content", "log-file", "LOG-FILE", "tag-file")
	}},
	{"ps prints other processes' environments", []string{"ps"}, func(a []field) bool {
		for _, f := range a {
			if strings.ContainsRune(f.s, 'e') && strings.Trim(f.s, "abcdefghijklmnopqrstuvwxyzACEHLMNOSTUVXZ") == "" {
				return true // BSD's e in a bundle without a dash (ps eww)
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
// curlLocal reports a URL curl reads from this machine's files (file:,
// percent-encoded or globbed names no rule sees) or a scheme it cannot
// be sure of.
func curlLocal(a []field) bool {
	for _, f := range a {
		u := strings.ToLower(f.s)
		if strings.Contains(u, "file:") || strings.Contains(u, "dict:") || strings.Contains(u, "gopher") || strings.Contains(u, "telnet:") {
			return true
		}
	}
	return false
}

// tarListFile reports -T LIST: tar reads names, and options (a -T inside
// naming another file), from LIST, and prints those it does not find.
func tarListFile(a []field) bool {
	for i, f := range a {
		s := f.s
		if strings.HasPrefix(s, "--") || !strings.HasPrefix(s, "-") && i > 0 {
			continue
		}
		for _, c := range strings.TrimPrefix(s, "-") {
			if c == 'T' {
				return true
			}
			if strings.ContainsRune("fCXbgHKLNVI", c) {
				break
			}
		}
	}
	return false
}

// tarRemote reports an archive named HOST:FILE (-f, --file, or the word
// after an old-style f), which tar reaches through rsh or ssh.
func tarRemote(a []field) bool {
	force := hasArg(a, "--force-local")
	for i, f := range a {
		v := ""
		switch {
		case strings.HasPrefix(f.s, "--file="):
			v = f.s[len("--file="):]
		case f.s == "--file" || f.s == "-f" || i == 0 && !strings.HasPrefix(f.s, "-") && strings.HasSuffix(f.s, "f"):
			if i+1 < len(a) {
				v = a[i+1].s
			}
		case strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "--") && strings.Contains(f.s, "f"):
			if j := strings.IndexByte(f.s, 'f'); j+1 < len(f.s) {
				v = f.s[j+1:]
			} else if i+1 < len(a) {
				v = a[i+1].s
			}
		}
		if c := strings.IndexByte(v, ':'); c > 0 && !force && !strings.Contains(v[:c], "/") {
			return true
		}
	}
	return false
}

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

package shell

import (
	"path"
	"strings"

	"github.com/gobwas/glob"
)

// arity says how many leading words of a command name what it does: the
// Always pattern keeps that many words literally and wildcards the rest.
// Keys are the leading words; the longest matching key wins. Read-only.
var arity = map[string]int{
	// file and text tools: the name alone
	"cat": 1, "ls": 1, "head": 1, "tail": 1, "wc": 1, "grep": 1, "egrep": 1, "fgrep": 1, "rg": 1, "find": 1, "fd": 1,
	"echo": 1, "printf": 1, "pwd": 1, "tree": 1, "diff": 1, "file": 1, "stat": 1, "du": 1, "df": 1, "which": 1,
	"whoami": 1, "date": 1, "less": 1, "more": 1, "sort": 1, "uniq": 1, "cut": 1, "tr": 1, "jq": 1, "yq": 1,
	"touch": 1, "mkdir": 1, "cp": 1, "mv": 1, "rm": 1, "rmdir": 1, "chmod": 1, "chown": 1, "ln": 1, "cd": 1,
	"realpath": 1, "dirname": 1, "basename": 1, "test": 1, "[": 1, "true": 1, "false": 1, "sleep": 1,
	"curl": 1, "wget": 1, "ps": 1, "kill": 1, "pkill": 1, "tee": 1, "xxd": 1, "od": 1, "hexdump": 1,
	"md5sum": 1, "sha256sum": 1, "shasum": 1, "base64": 1, "awk": 1, "gawk": 1, "column": 1, "nl": 1,
	"paste": 1, "join": 1, "comm": 1, "cmp": 1, "readlink": 1, "uname": 1, "hostname": 1, "id": 1,
	"tar": 1, "zip": 1, "unzip": 1, "gzip": 1, "gunzip": 1, "rsync": 1, "scp": 1, "ssh": 1, "open": 1,
	"type": 1, "source": 1, ".": 1, "read": 1, "export": 1, "declare": 1, "local": 1, "set": 1, "unset": 1,
	"python": 1, "python3": 1, "node": 1, "ruby": 1, "perl": 1, "php": 1, "deno": 1,
	// tools with subcommands
	"git": 2, "git stash": 3, "git remote": 3, "git worktree": 3, "git submodule": 3, "git notes": 3,
	"npm": 2, "npm run": 3, "npm run-script": 3, "npm exec": 3, "npx": 2,
	"yarn": 2, "yarn run": 3, "yarn workspace": 4, "pnpm": 2, "pnpm run": 3, "pnpm exec": 3, "pnpm dlx": 3,
	"bun": 2, "bun run": 3, "bunx": 2, "deno task": 3,
	"cargo": 2, "go": 2, "go mod": 3, "go tool": 3, "rustup": 2, "make": 2, "cmake": 2, "just": 2, "task": 2,
	"docker": 2, "docker compose": 3, "docker container": 3, "docker image": 3, "docker network": 3,
	"docker volume": 3, "docker-compose": 2, "podman": 2, "kubectl": 2, "helm": 2, "k9s": 1,
	"gh": 3, "glab": 3, "aws": 3, "gcloud": 3, "az": 3, "terraform": 2, "tofu": 2, "pulumi": 2,
	"brew": 2, "apt": 2, "apt-get": 2, "dnf": 2, "yum": 2, "pacman": 2, "snap": 2,
	"pip": 2, "pip3": 2, "uv": 2, "uv run": 3, "uv pip": 3, "poetry": 2, "pipenv": 2, "conda": 2, "pytest": 1,
	"systemctl": 2, "journalctl": 1, "launchctl": 2, "dotnet": 2, "mvn": 2, "gradle": 2, "./gradlew": 2,
	"bundle": 2, "bundle exec": 3, "rails": 2, "rake": 2, "mix": 2, "composer": 2, "php artisan": 3,
	"swift": 2, "xcodebuild": 1, "flutter": 2, "dart": 2, "ng": 2, "nx": 2, "turbo": 2, "vercel": 2,
	"wrangler": 2, "fly": 2, "flyctl": 2, "heroku": 2, "firebase": 2, "supabase": 2, "prisma": 2,
	"tsc": 1, "eslint": 1, "prettier": 1, "vitest": 1, "jest": 1, "ruff": 2, "black": 1, "mypy": 1,
}

// closedArity lists prefixes whose last word names a script: the pattern is
// exact when nothing follows it (`npm run build`, not `npm run build *`).
func closedArity(key string) bool {
	switch key {
	case "npm run", "npm run-script", "yarn run", "pnpm run", "bun run", "deno task":
		return true
	}
	return false
}

// neverPattern lists commands for which no wildcard pattern is offered:
// wrappers (their inner command gets the pattern) and shells.
func neverPattern(name string) bool {
	if _, ok := wrapperSpecs[name]; ok {
		return true
	}
	return name == "eval" || isShell(name) || opaqueWrapper(name) || name == "alias"
}

// AlwaysPattern returns the pattern the Always button saves for argv: the
// narrowest useful prefix from the arity table with a trailing ` *` (which
// the gate also lets match nothing), the exact command when a wildcard would
// be unsafe, or "" when no pattern is safe (a wrapper, run-time parts).
// Literal words are quoted as in Text and escaped with glob.QuoteMeta.
func AlwaysPattern(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	for _, a := range argv {
		if strings.Contains(a, Dyn) {
			return ""
		}
	}
	name := argv[0]
	if strings.IndexByte(name, '/') >= 0 {
		// A path-qualified program: only the exact command, since the
		// base-name spelling is for deny rules only.
		if neverPattern(path.Base(name)) {
			return ""
		}
		return exactPattern(argv)
	}
	if neverPattern(name) {
		return ""
	}
	if exactAlways(argv) {
		return exactPattern(argv)
	}
	if codeFlag(argv) || isInterpreter(name) && len(argv) > 1 {
		return exactPattern(argv)
	}
	if name == "sed" {
		if len(argv) > 1 && argv[1] == "-n" {
			return prefixPattern(argv, 2, true)
		}
		return exactPattern(argv) // `sed *` would cover -i, e and w
	}
	n, found := 1, false
	var buf [64]byte
	for k := min(3, len(argv)); k >= 1 && !found; k-- {
		key := buf[:0]
		for i, a := range argv[:k] {
			if i > 0 {
				key = append(key, ' ')
			}
			key = append(key, a...)
		}
		n, found = arity[string(key)] // no allocation: the compiler converts in place
	}
	if !found {
		n = defaultArity(argv)
	}
	n = min(n, len(argv))
	for _, a := range argv[1:n] {
		if strings.HasPrefix(a, "-") {
			return exactPattern(argv) // an option where a subcommand belongs (git -C DIR ...)
		}
	}
	open := len(argv) > n || !closedArity(strings.Join(argv[:n-1], " "))
	if n < 2 {
		open = true
	}
	return prefixPattern(argv, n, open)
}

// defaultArity guesses for commands not in the table: a second word that
// looks like a subcommand is kept.
func defaultArity(argv []string) int {
	if len(argv) < 2 {
		return 1
	}
	s := argv[1]
	if s == "" || s[0] == '-' {
		return 1
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':') {
			return 1
		}
	}
	return 2
}

func isInterpreter(name string) bool {
	switch name {
	case "node", "nodejs", "bun", "perl", "ruby", "php", "lua", "luajit", "Rscript", "osascript", "tclsh", "pwsh", "powershell":
		return true
	}
	return isPython(name)
}

func prefixPattern(argv []string, n int, open bool) string {
	size := 2
	for _, a := range argv[:n] {
		size += 2*len(a) + 3
	}
	b := make([]byte, 0, size)
	for i, a := range argv[:n] {
		if i > 0 {
			b = append(b, ' ')
		}
		start := len(b)
		b = appendQuoted(b, a)
		if strings.ContainsAny(string(b[start:]), "*?\\[]{}") {
			q := glob.QuoteMeta(string(b[start:]))
			b = append(b[:start], q...)
		}
	}
	if open {
		b = append(b, " *"...)
	}
	return string(b)
}

// exactPattern matches argv exactly.
func exactPattern(argv []string) string {
	return prefixPattern(argv, len(argv), false)
}

// altTexts returns other spellings of argv for deny rules: the base name of a
// path-qualified argv0, git without its global options, and rm with its
// recursive/force flags normalised to -rf.
func altTexts(argv []string, text string) []string {
	var alts []string
	add := func(v []string) {
		t := joinQuoted(v)
		if t == text {
			return
		}
		for _, x := range alts {
			if x == t {
				return
			}
		}
		alts = append(alts, t)
	}
	base := argv
	if i := strings.LastIndexByte(argv[0], '/'); i >= 0 && i < len(argv[0])-1 {
		if b := argv[0][i+1:]; !strings.Contains(b, Dyn) {
			base = append([]string{b}, argv[1:]...)
			add(base)
		}
	}
	switch base[0] {
	case "git":
		if len(base) < 2 || !strings.HasPrefix(base[1], "-") {
			break
		}
		fs := make([]field, len(base)-1)
		for i, s := range base[1:] {
			fs[i] = field{s: s}
		}
		if i := gitGlobalEnd(fs); i > 0 && i < len(fs) {
			add(append([]string{"git"}, base[1+i:]...))
		}
	case "rm":
		if v, ok := normaliseRm(base); ok {
			add(v)
		}
	}
	return alts
}

// normaliseRm rewrites rm's options as one leading cluster with r before f
// (`rm -fr x`, `rm --recursive --force x` -> `rm -rf x`).
func normaliseRm(argv []string) ([]string, bool) {
	var flags []byte
	var rest []string
	has := func(c byte) bool { return strings.IndexByte(string(flags), c) >= 0 }
	opts := true
	for _, a := range argv[1:] {
		switch {
		case !opts || a == "-" || !strings.HasPrefix(a, "-"):
			rest = append(rest, a)
		case a == "--":
			opts = false
			rest = append(rest, a)
		case a == "--recursive":
			flags = append(flags, 'r')
		case a == "--force":
			flags = append(flags, 'f')
		case a == "--dir":
			flags = append(flags, 'd')
		case a == "--verbose":
			flags = append(flags, 'v')
		case strings.HasPrefix(a, "--"):
			rest = append(rest, a)
		default:
			for i := 1; i < len(a); i++ {
				c := a[i]
				if c == 'R' {
					c = 'r'
				}
				flags = append(flags, c)
			}
		}
	}
	if len(flags) == 0 {
		return nil, false
	}
	var ordered []byte
	for _, c := range []byte("rf") {
		if has(c) {
			ordered = append(ordered, c)
		}
	}
	for _, c := range flags {
		if c != 'r' && c != 'f' && strings.IndexByte(string(ordered), c) < 0 {
			ordered = append(ordered, c)
		}
	}
	out := append([]string{"rm", "-" + string(ordered)}, rest...)
	return out, true
}

// exactAlways lists commands whose Always pattern is the exact command: a
// wildcard would cover what was never shown (other hosts, other code,
// other files to destroy, a forced push).
func exactAlways(argv []string) bool {
	switch argv[0] {
	case "source", ".", "ssh", "scp", "sftp", "curl", "wget", "export", "declare", "typeset", "local", "readonly",
		"tar", "zip", "unzip", "7z", "rsync", "dd", "kill", "pkill", "killall", "chmod", "chown", "crontab", "npx", "bunx":
		return true
	case "rm":
		for _, a := range argv[1:] {
			if a == "--" {
				break
			}
			if strings.HasPrefix(a, "--") && (strings.HasPrefix(a, "--r") || strings.HasPrefix(a, "--f")) ||
				len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a, "rRf") {
				return true
			}
		}
	}
	if len(argv) < 2 {
		return false
	}
	switch argv[0] + " " + argv[1] {
	case "go build", "go test", "go vet", "go install", "go generate", "cargo build", "cargo test", "cargo check",
		"cargo clippy", "cargo install", "go run", "cargo run", "npm exec", "pnpm exec", "pnpm dlx", "yarn dlx", "uv run", "deno run", "bun x",
		"git clean", "git reset", "docker run", "docker exec", "kubectl exec", "kubectl delete", "terraform apply",
		"terraform destroy":
		return true
	case "git push":
		for _, a := range argv[2:] {
			if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+") || strings.HasPrefix(a, ":") {
				return true
			}
		}
	}
	return false
}

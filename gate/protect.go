package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"approvalbot/shell"
)

// Self-protection, built in and final: an agent must never rewrite its own
// permissions or read approvalbot's credentials, so writes to the
// protected paths (rules file, data dir, binary, every supported agent's
// hook settings) and reads of the data dir and of process environments are
// denied before any rule is consulted. Deciding approvals needs the
// approver credential, which lives in the data dir; the shell analysis
// keeps the agent from reading it.

// pathEffect is what a command does to the paths it is given.
type pathEffect int

const (
	writesPaths  pathEffect = iota + 1 // creates or changes the path
	removesPaths                       // removes, moves or re-permissions the path and what is below it
)

// writerCommands are the commands that obviously write, remove or move the
// paths among their arguments. sed and perl count only with -i.
var writerCommands = map[string]pathEffect{
	"rm": removesPaths, "rmdir": removesPaths, "unlink": removesPaths, "shred": removesPaths,
	"mv": removesPaths, "chmod": removesPaths, "chown": removesPaths, "chgrp": removesPaths,
	"chattr": removesPaths, "rsync": removesPaths,
	"cp": writesPaths, "tee": writesPaths, "truncate": writesPaths, "touch": writesPaths,
	"ln": writesPaths, "install": writesPaths, "dd": writesPaths, "mkdir": writesPaths,
	"sed": writesPaths, "perl": writesPaths, "patch": writesPaths, "tar": writesPaths,
	"unzip": writesPaths,
	// Compressors replace each file (a directory's, with -r) by another.
	"gzip": removesPaths, "gunzip": removesPaths, "xz": removesPaths, "unxz": removesPaths, "bzip2": removesPaths,
	"bunzip2": removesPaths, "zstd": removesPaths, "unzstd": removesPaths, "lz4": removesPaths,
	"compress": removesPaths, "uncompress": removesPaths,
}

// intoDirCommands copy or move files into a directory argument.
var intoDirCommands = map[string]bool{"cp": true, "mv": true, "ln": true, "install": true, "rsync": true, "tar": true, "unzip": true}

// agentSettingFiles and agentSettingDirs are every supported agent's hook
// settings, at user level (under home) and project level (anywhere), as
// path suffixes: an agent that edits them could remove the gate.
var agentSettingFiles = []string{
	"/.claude/settings.json", "/.claude/settings.local.json", "/.gemini/settings.json", "/.cursor/hooks.json",
	"/.qwen/settings.json",
}

// .github/copilot holds Copilot CLI's repository settings
// (settings.json, settings.local.json), which take hooks and
// disableAllHooks.
var agentSettingDirs = []string{
	"/.codex", "/.copilot", "/.github/hooks", "/.github/copilot", "/.opencode/plugin", "/.opencode/plugins",
	"/.config/opencode/plugin", "/.config/opencode/plugins", "/.config/approvalbot",
}

// protectCommand returns why the builtin layer denies (or, when it cannot
// tell, asks about) cmd, and which.
func (p *Policy) protectCommand(cmd *shell.Command, cwd string) (string, Action) {
	if len(cmd.Argv) == 0 {
		return "", ""
	}
	name := filepath.Base(cmd.Argv[0])
	args := cmd.Argv[1:]
	if why := selfDecision(cmd.Argv, cwd); why != "" {
		return why, Deny
	}
	if name == "git" && gitSubcommand(cmd.Argv) == "mv" {
		// git mv moves like mv, into a directory too (git mv dir .claude).
		name, args, cwd = "mv", gitSubArgs(cmd.Argv), gitDir(cmd.Argv, cwd)
	}
	effect, ok := writerCommands[name]
	if !ok {
		return "", ""
	}
	if (name == "sed" || name == "perl") && !hasInPlaceFlag(args) {
		return "", ""
	}
	var unsure string
	for _, a := range args {
		for _, cand := range pathCandidates(a) {
			if intoDirCommands[name] {
				if ps, ok := resolvePath(cand, cwd, p.home); ok && agentSettingsBelow(ps.abs) {
					return name + " into " + ps.abs + " could write an agent's hook settings", Deny
				}
			}
			why, action := p.protectArg(cand, cwd, effect)
			if action == Deny {
				return why, Deny
			}
			if why != "" && unsure == "" {
				unsure = why
			}
		}
	}
	if unsure != "" {
		return unsure, Ask
	}
	return "", ""
}

// protectArg judges one path argument of a writer command.
func (p *Policy) protectArg(arg, cwd string, effect pathEffect) (string, Action) {
	if arg == "" || strings.Contains(arg, shell.Dyn) {
		return "", ""
	}
	ps, ok := resolvePath(arg, cwd, p.home)
	if !ok {
		// A relative argument in an unknown directory could point
		// anywhere, the protected files included.
		return "not understood: cannot tell where `" + arg + "` points (the directory is not known)", Ask
	}
	if why, action := p.protectPath(ps.abs, ps.raw, cwd, KindWrite); action == Deny {
		return why, Deny
	} else if why != "" {
		return why, Ask
	}
	if effect == removesPaths {
		if pr := p.protectedBelow(ps.abs); pr != "" {
			return "removing or moving " + ps.abs + " would take approvalbot's own files (" + pr + ") with it", Deny
		}
		if agentSettingsBelow(ps.abs) || agentSettingsInside(ps.abs) {
			return "removing or moving " + ps.abs + " would take an agent's hook settings with it", Deny
		}
		if d := p.binDirBelow(ps.abs); d != "" {
			return "removing or moving " + ps.abs + " would take " + d + ", where programs are found by name (approvalbot's hook may be one), with it", Ask
		}
	}
	return "", ""
}

// protectPath returns why the builtin layer denies (Deny) or must ask a
// person about (Ask) a write (kind KindWrite) or read (KindRead) of abs.
func (p *Policy) protectPath(abs, raw, cwd string, kind ToolKind) (string, Action) {
	forms := p.canonicalForms(abs, raw, cwd)
	unknown := false
	for _, f := range forms {
		if f == "" {
			unknown = true
			continue
		}
		if kind == KindRead {
			if why := p.secretPath(f); why != "" {
				return why, Deny
			}
			continue
		}
		if pr := p.protectedBy(f); pr != "" {
			return "writes to approvalbot's own files (" + pr + ") are denied", Deny
		}
		if agentSettings(f) {
			return "writes to an agent's hook settings (" + f + ") are denied", Deny
		}
	}
	if unknown {
		return "not understood: cannot tell which file `" + abs + "` is", Ask
	}
	if kind == KindWrite {
		for _, f := range forms {
			if gitInternal(f) {
				return "writes into git's internals (" + f + ") can make later git commands run programs", Ask
			}
			if agentCode(f) {
				return "writes to " + f + ", which an agent loads as hooks, plugins or MCP servers that run without asking the gate", Ask
			}
			if toolchainFile(f) {
				return "writes to " + f + ", which names the programs cargo and rustc run (rustup runs a toolchain it names even for cargo --version)", Ask
			}
			if p.startupFile(f) {
				return "writes to " + f + ", which shells (an agent's `bash -lc`), git, ssh, python or jq run as code, or as settings that run programs, without asking the gate", Ask
			}
			if p.binDirFile(f) {
				// Removed, emptied or made not executable, it stops what
				// runs by that name: approvalbot's hook among them.
				return "changes " + f + " among the programs run by name (approvalbot's hook may be one)", Ask
			}
		}
	}
	return "", ""
}

// canonicalForms returns the paths abs may stand for: itself, the target
// of /proc/*/root and /proc/*/cwd forms, and where symlinks along it lead.
// An empty form means a path that cannot be resolved (/dev/fd/N, another
// process's cwd).
func (p *Policy) canonicalForms(abs, raw, cwd string) []string {
	forms := []string{abs}
	if ph := physical(raw, cwd); ph != abs {
		forms = append(forms, ph) // "" when it cannot be resolved
	}
	if rest, ok := strings.CutPrefix(abs, "/proc/"); ok {
		pid, tail, _ := strings.Cut(rest, "/")
		link, inner, _ := strings.Cut(tail, "/")
		switch {
		case link == "root" && (pid == "self" || pid == "thread-self" || isNumber(pid)):
			forms = append(forms, filepath.Clean("/"+inner))
		case link == "cwd" && (pid == "self" || pid == "thread-self") && cwd != "":
			forms = append(forms, filepath.Join(cwd, inner))
		case link == "cwd" || link == "fd" || link == "exe" || link == "map_files":
			forms = append(forms, "")
		}
	}
	if strings.HasPrefix(abs, "/dev/fd/") || strings.HasPrefix(abs, "/dev/stdin") {
		forms = append(forms, "")
	}
	for _, f := range append([]string(nil), forms...) {
		if f == "" {
			continue
		}
		if r := resolveExisting(f); r != f {
			forms = append(forms, r)
		}
	}
	return forms
}

// physical resolves an absolute path the way the kernel does: symlinks
// first, then "..", component by component (filepath.Clean removes ".."
// lexically, which is wrong after a symlinked directory). Only paths with
// ".." need it; "" for a relative path.
func physical(raw, cwd string) string {
	if !filepath.IsAbs(raw) {
		return ""
	}
	cur := "/"
	parts := strings.Split(raw, "/")
	for i, c := range parts {
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		// /proc/PID/... and /dev/fd name another process's view: resolved
		// here they would be the gate's own. Only /proc/self/root (the
		// root) and /proc/self/cwd (the command's directory) are known.
		if procDir(cur) {
			switch {
			case c == "root":
				cur = "/"
				continue
			case c == "cwd" && cwd != "" && (strings.HasSuffix(cur, "/self") || strings.HasSuffix(cur, "/thread-self")):
				cur = cwd
				continue
			}
			return ""
		}
		if next == "/dev/fd" || next == "/dev/stdin" || next == "/dev/stdout" || next == "/dev/stderr" {
			if i == len(parts)-1 && next != "/dev/fd" {
				return next // the stream itself, judged as written
			}
			return ""
		}
		if next == "/proc" || cur == "/proc" {
			cur = next // /proc/self stays /proc/self: it is the command's, not ours
			continue
		}
		if r, err := filepath.EvalSymlinks(next); err == nil {
			if r == "/proc" || strings.HasPrefix(r, "/proc/") || strings.HasPrefix(r, "/dev/fd") {
				return "" // a link into another process's view
			}
			cur = r
		} else if cur = danglingTarget(next); cur == "" {
			return "" // a link whose target cannot be told
		}
	}
	return cur
}

// procDir reports /proc/self, /proc/thread-self or /proc/PID.
func procDir(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok || strings.Contains(rest, "/") {
		return false
	}
	return rest == "self" || rest == "thread-self" || isNumber(rest)
}

// resolveExisting resolves the symlinks of the longest existing prefix of
// abs and appends the rest.
func resolveExisting(abs string) string {
	dir, rest := abs, ""
	for i := 0; i < 64; i++ {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if t := danglingTarget(dir); t == "" {
			return ""
		} else if t != dir {
			return filepath.Join(t, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
	return abs
}

// hardLinks returns how many names the regular file at abs has (1 when
// it is not one, or is not there).
func hardLinks(abs string) uint64 {
	info, err := os.Stat(abs)
	if err != nil || !info.Mode().IsRegular() {
		return 1
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

func isNumber(s string) bool {
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

// agentSettings reports an agent's hook settings file, or a path below one
// of their settings directories.
func agentSettings(abs string) bool {
	for _, f := range agentSettingFiles {
		if strings.HasSuffix(abs, f) {
			return true
		}
	}
	if strings.Contains(abs, "/.claude/settings") && strings.HasSuffix(abs, ".json") {
		return true
	}
	for _, d := range agentSettingDirs {
		if strings.HasSuffix(abs, d) || strings.Contains(abs, d+"/") {
			return true
		}
	}
	return false
}

// agentCodeDirs and agentCodeFiles hold what agents load and run by
// themselves, beside their hook settings: subagents and skills (their
// front matter may declare hooks or MCP servers), hook scripts, plugins,
// MCP server definitions, the commands Claude Code's launch.json, workflows,
// routines and scheduled tasks start (the paths Claude Code's own sandbox
// keeps from its agent). Not denied (asking an agent to write a subagent
// is common); a person decides each write.
var (
	agentCodeDirs = []string{
		"/.claude/agents", "/.claude/skills", "/.claude/commands", "/.claude/hooks", "/.claude/plugins",
		"/.claude/workflows", "/.claude/routines",
		// Sourced before every Bash command; where to find IDE MCP servers.
		"/.claude/shell-snapshots", "/.claude/session-env", "/.claude/ide",
		"/.gemini", "/.qwen", "/.opencode", "/.config/opencode", "/.cursor",
		"/.github/agents", "/.github/skills", "/.agents",
	}
	agentCodeFiles = []string{
		"/.claude.json", "/.mcp.json", "/opencode.json", "/opencode.jsonc",
		"/.claude/launch.json", "/.claude/scheduled_tasks.json", "/.github/mcp.json", "/.vscode/mcp.json",
		// A task may run when an editor opens the folder (runOn: folderOpen).
		"/.vscode/tasks.json",
		// VS Code's chat.hookFilesLocations picks (or drops) the hook files
		// its agents load.
		"/.vscode/settings.json",
	}
)

// agentCode reports a file an agent loads as hooks, plugins or MCP
// servers (see agentCodeDirs).
func agentCode(abs string) bool {
	for _, f := range agentCodeFiles {
		if strings.HasSuffix(abs, f) {
			return true
		}
	}
	for _, d := range agentCodeDirs {
		if strings.HasSuffix(abs, d) || strings.Contains(abs, d+"/") {
			return true
		}
	}
	return false
}

// agentSettingsBelow reports a directory that holds, or may hold, an
// agent's hook settings (removing it removes them).
func agentSettingsBelow(abs string) bool {
	switch filepath.Base(abs) {
	case ".claude", ".gemini", ".cursor", ".github", ".opencode", ".config", ".qwen":
		return true
	}
	return agentSettings(abs)
}

// gitInternal reports a path inside a .git directory, or a file named .git
// (which can point git at another directory: `gitdir: ...`), or what makes
// any directory one git uses as a repository: a file named HEAD (with
// objects/ and refs/ beside it, git takes the directory for a bare
// repository), or the config or commondir beside a HEAD. Checked when the
// file is written, so that a git command judged earlier (a background
// job, a call running in parallel) cannot find a repository made after.
func gitInternal(abs string) bool {
	if strings.Contains(abs+"/", "/.git/") {
		return true
	}
	switch filepath.Base(abs) {
	case "HEAD":
		return true
	case "config", "commondir", "config.worktree":
		return regular(filepath.Join(filepath.Dir(abs), "HEAD"))
	}
	return false
}

// pathCandidates returns the possible paths in one argument: the argument
// itself unless it is an option, and the value of NAME=VALUE and
// --opt=VALUE forms (dd of=..., --target-directory=...), and the value of
// a short option glued to it (-t DIR is the next argument, itself a candidate).
func pathCandidates(a string) []string {
	var out []string
	if !strings.HasPrefix(a, "-") {
		out = append(out, a)
	}
	if i := strings.IndexByte(a, '='); i >= 0 {
		out = append(out, a[i+1:])
	}
	if len(a) > 2 && a[0] == '-' && a[1] != '-' && (a[1] == 't' || a[1] == 'o') {
		out = append(out, a[2:])
	}
	return out
}

// hasInPlaceFlag reports whether sed/perl args edit files in place.
func hasInPlaceFlag(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "--in-place") || strings.HasPrefix(a, "--in-pl") || a == "--i" || a == "--in" || a == "--in-" {
			return true
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'i') {
			// -i, -i.bak, -ni, -pi -e ...
			return true
		}
	}
	return false
}

// selfExecutable is approvalbot's own binary, protected like its data.
func selfExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		return r
	}
	return exe
}

// danglingTarget follows p while it is a symbolic link whose target does
// not exist (EvalSymlinks fails on it), and returns where it leads: open
// with O_CREAT creates that file, not the link. p itself when it is not a
// link.
func danglingTarget(p string) string {
	for range 40 {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return p
		}
		t, err := os.Readlink(p)
		if err != nil {
			return p
		}
		if !filepath.IsAbs(t) {
			t = filepath.Dir(p) + "/" + t // not Join: a ".." after a link is the kernel's
		}
		// The directory part as the kernel resolves it: links first, then
		// "..", component by component (s/../.bashrc with s -> ~/.ssh is
		// ~/.bashrc).
		i := strings.LastIndexByte(t, '/')
		dir, base := t[:i], t[i+1:]
		if dir == "" {
			dir = "/"
		}
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			t = filepath.Join(r, base)
		} else if strings.Contains(t, "/..") {
			return "" // cannot be told: judged as not understood
		}
		p = filepath.Clean(t)
	}
	return p
}

// selfDecision says why an approvalbot command line decides for a person:
// approving, denying, changing modes or Always rules, answering prompts
// (watch, a web sign-in link), taking the database (backup), rewriting an
// agent's hook (install) or running another daemon. The CLI reads the
// approver credential itself, so an agent running it would answer its
// own prompts. Reading commands (pending, audit, check, doctor) stay
// with the rules.
func selfDecision(argv []string, cwd string) string {
	name := filepath.Base(argv[0])
	if name != "approvalbot" {
		exe := argv[0]
		if !strings.Contains(exe, "/") || strings.Contains(exe, shell.Dyn) {
			return ""
		}
		if !filepath.IsAbs(exe) && cwd != "" {
			exe = filepath.Join(cwd, exe)
		}
		self := selfExecutable()
		if r, err := filepath.EvalSymlinks(exe); err != nil || self == "" || r != self {
			return ""
		}
	}
	if len(argv) < 2 {
		return ""
	}
	sub := argv[1] // the CLI takes its subcommand first
	words := []string{sub}
	for _, a := range argv[2:] {
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	decides := false
	switch sub {
	case "approve", "deny", "watch", "backup", "ui-link", "install", "serve":
		decides = true
	case "rules":
		decides = len(words) > 1 && words[1] != "list" && words[1] != "ls" && words[1] != "lint" && words[1] != "help"
	case "mode":
		decides = len(words) > 2 // mode AGENT VALUE sets it
	case "suggest":
		for _, a := range argv[1:] {
			decides = decides || strings.HasPrefix(strings.TrimLeft(a, "-"), "apply") && strings.HasPrefix(a, "-")
		}
	}
	if !decides {
		return ""
	}
	return "approvalbot " + sub + " decides for a person (it uses the approver credential itself): an agent may not run it"
}

// agentSettingsInside reports a directory holding, at its top, an agent's
// project settings (a project removed, moved or compressed whole takes
// them along).
func agentSettingsInside(dir string) bool {
	if !isDir(dir) {
		return false
	}
	for _, f := range agentSettingFiles {
		if exists(dir + f) {
			return true
		}
	}
	for _, d := range agentSettingDirs {
		if exists(dir + d) {
			return true
		}
	}
	return false
}

// homeStartupFiles are files under the home directory that programs read
// as code or configuration that runs programs: shell start-up files (Codex
// runs every command through `bash -lc`, which reads the login files), git's
// and ssh's user configuration (core.fsmonitor, ProxyCommand).
// Also jq's ~/.jq (sourced into every jq program), curl's and wget's
// configuration (an output file, another config), and Python's user site
// (a .pth line or usercustomize runs in every python, mypy or pip).
var homeStartupFiles = []string{".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".config/fish/config.fish", ".pam_environment", ".gitconfig",
	".config/git/config", ".ssh/config", ".ssh/rc", ".ssh/authorized_keys", ".jq", ".curlrc", ".wgetrc",
	// Sourced by the start-up files when these tools are installed
	// (rustup, deno), or read by every go command (GOFLAGS, GOTOOLCHAIN).
	".cargo/env", ".deno/env", ".config/go/env"}

// homeStartupDirs hold what start-up files source, version managers'
// shims and hooks that run in place of a program (pyenv's pyenv.d), and
// what a desktop session starts.
var homeStartupDirs = []string{".bashrc.d", ".profile.d", ".zshrc.d", ".oh-my-zsh", ".config/fish", ".nvm",
	".pyenv", ".rbenv", ".asdf", ".sdkman", ".config/systemd/user", ".config/autostart"}

// binDirs are where programs are found by name (home-relative ones with a
// leading "~/"): a program written there runs in place of the one a rule
// allows (`git status` running ~/.local/bin/git).
var binDirs = []string{"~/.local/bin", "~/bin", "~/.cargo/bin", "~/go/bin", "~/.bun/bin", "~/.deno/bin",
	"/usr/local/bin", "/usr/local/sbin", "/usr/bin", "/usr/sbin", "/bin", "/sbin"}

// binDirBelow returns the first of binDirs at or below abs, "" for none.
func (p *Policy) binDirBelow(abs string) string {
	for _, d := range binDirs {
		if rest, ok := strings.CutPrefix(d, "~/"); ok {
			if p.home == "" {
				continue
			}
			d = p.home + "/" + rest
		}
		if d == abs || strings.HasPrefix(d, strings.TrimSuffix(abs, "/")+"/") {
			return d
		}
	}
	return ""
}

// binDirFile reports a file directly in one of binDirs.
func (p *Policy) binDirFile(abs string) bool {
	dir := filepath.Dir(abs)
	for _, d := range binDirs {
		if rest, ok := strings.CutPrefix(d, "~/"); ok {
			if p.home == "" {
				continue
			}
			d = p.home + "/" + rest
		}
		if dir == d {
			return true
		}
	}
	return false
}

// startupFile reports one of homeStartupFiles in the home directory, or a
// system-wide start-up file.
func (p *Policy) startupFile(abs string) bool {
	if strings.HasPrefix(abs, "/etc/profile") || abs == "/etc/bash.bashrc" || strings.HasPrefix(abs, "/etc/zsh") {
		return true
	}
	if p.home == "" {
		return false
	}
	rel, ok := strings.CutPrefix(abs, p.home+"/")
	if !ok {
		return false
	}
	if site, ok := strings.CutPrefix(rel, ".local/lib/python"); ok {
		_, file, _ := strings.Cut(site, "/site-packages/")
		return strings.HasSuffix(file, ".pth") || file == "usercustomize.py" || file == "sitecustomize.py"
	}
	for _, d := range homeStartupDirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return slices.Contains(homeStartupFiles, rel)
}

// toolchainFile reports a file that makes a plain, allowed command run a
// program it names: rustup's rust-toolchain(.toml) (a toolchain path, for
// cargo --version too) and cargo's config (rustc-wrapper, runners, aliases).
func toolchainFile(f string) bool {
	switch filepath.Base(f) {
	case "rust-toolchain", "rust-toolchain.toml":
		return true
	case "config", "config.toml":
		return filepath.Base(filepath.Dir(f)) == ".cargo"
	}
	return false
}

package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"approvalbot/shell"
)

// gitRepoHazard says why the repository git would use when run in dir is
// not an ordinary .git directory, "" when it is (or there is none). git
// finds a bare repository by its contents in any directory, and follows a
// .git file to any other; a config written there (core.fsmonitor,
// core.pager, diff.*.textconv) runs programs on a plain `git status`.
func gitRepoHazard(dir string) string {
	why, _ := gitRepo(dir)
	return why
}

// gitRepo is gitRepoHazard, and whether git finds a repository at all.
func gitRepo(dir string) (string, bool) {
	if !statDir(dir) {
		return "", false // git cannot run there
	}
	// git walks up from the directory it lands in, symbolic links
	// resolved (getcwd), and follows links to HEAD, objects and refs.
	start := filepath.Clean(dir)
	if real, err := filepath.EvalSymlinks(start); err == nil {
		start = real
	}
	for d := start; ; {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			switch {
			case fi.IsDir() && gitHead(filepath.Join(d, ".git", "HEAD")):
				return "", true
			case fi.IsDir():
				// Not a repository to git (no HEAD): it goes on and tests
				// the directory itself as a bare one.
			case linkedGitDir(filepath.Join(d, ".git")):
				return "", true
			default:
				return "git would follow " + filepath.Join(d, ".git") + " (not a directory) to another repository", true
			}
		}
		// git takes objects and refs that it may enter (access X_OK): a
		// regular file with the execute bit passes.
		if gitHead(filepath.Join(d, "HEAD")) && (statExists(filepath.Join(d, "objects")) && statExists(filepath.Join(d, "refs")) ||
			statExists(filepath.Join(d, "commondir"))) {
			// A bare repository, or one whose objects and refs are in the
			// directory its commondir file names.
			return "git would use " + d + " as a repository (its config can run programs)", true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// gitRepoByLine says why the repository git would use in dir may be one
// the line itself makes before git runs, "" when it cannot be: dir is not
// there yet, or a directory git looks at on its way up to the repository
// is created, moved or linked by the line, or gets a HEAD, commondir or
// config, or objects/, refs/ or info/ (a bare repository whose config
// runs programs). What is on disk was checked by gitRepo.
func (s *evalState) gitRepoByLine(dir string) string {
	if why, ok := s.gitByLine[dir]; ok {
		return why
	}
	why := s.gitRepoMadeByLine(dir)
	if s.gitByLine == nil {
		s.gitByLine = make(map[string]string, 1)
	}
	s.gitByLine[dir] = why
	return why
}

func (s *evalState) gitRepoMadeByLine(dir string) string {
	if dir != s.cwd && !statDir(dir) && statDir(s.cwd) {
		// Only the line can make it (or git fails there).
		return "git runs in " + dir + ", which is not there before the line runs: which repository it would use cannot be checked"
	}
	if s.madeUnknown {
		return "the line makes a directory only known when it runs, which could be a repository git would use"
	}
	if len(s.made) == 0 {
		return ""
	}
	for d := filepath.Clean(dir); ; {
		if exists(filepath.Join(d, ".git")) {
			return "" // git stops here; writes into .git ask on their own
		}
		for _, m := range s.made {
			if m == d || strings.HasPrefix(d, m+"/") || m == "/" {
				return "the line creates, moves or links " + m + " before git runs in " + dir + ": it could be a repository whose config runs programs"
			}
			if rel, ok := strings.CutPrefix(m, d+"/"); ok && gitStructure(rel) {
				return "the line writes " + m + " before git runs in " + dir + ": git would use " + d + " as a repository (its config can run programs)"
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// gitStructure reports a path, relative to a directory, that makes it (or
// shapes it as) a git directory.
func gitStructure(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	switch top {
	case "HEAD", "commondir", "config", "config.worktree", "gitdir", "packed-refs", "objects", "refs", "info":
		return true
	}
	return false
}

// madePaths returns what the line writes or creates: its write targets
// and the directories mkdir makes, absolute; unknown when a target or a
// mkdir's directory is not known.
func madePaths(a *shell.Analysis) (made []string, unknown bool) {
	for _, w := range a.Writes {
		if w.Dynamic || strings.Contains(w.Path, shell.Dyn) || !filepath.IsAbs(w.Path) {
			unknown = true
			continue
		}
		made = append(made, filepath.Clean(w.Path))
	}
	for i := range a.Commands {
		c := &a.Commands[i]
		if len(c.Argv) == 0 || filepath.Base(c.Argv[0]) != "mkdir" {
			continue
		}
		opts := true
		for j := 1; j < len(c.Argv); j++ {
			arg := c.Argv[j]
			switch {
			case opts && arg == "--":
				opts = false
				continue
			case opts && (arg == "-m" || arg == "--mode" || arg == "--context"):
				j++
				continue
			case opts && strings.HasPrefix(arg, "-") && arg != "-":
				continue
			}
			if c.Cwd == "" || strings.Contains(c.Cwd+arg, shell.Dyn) {
				unknown = true
				continue
			}
			if !filepath.IsAbs(arg) {
				arg = filepath.Join(c.Cwd, arg)
			}
			made = append(made, filepath.Clean(arg))
		}
	}
	return made, unknown
}

// linkedGitDir reports a .git file of a linked worktree or a submodule:
// `gitdir: PATH` naming a directory inside another .git directory, whose
// files (config among them) only a person may write.
func linkedGitDir(gitFile string) bool {
	target, ok := gitFileTarget(gitFile)
	return ok && gitInternal(target) && strings.Contains(target, "/.git/") && directory(target)
}

// gitFileTarget reads a .git file (`gitdir: PATH`) and returns the
// directory it names, cleaned and with links resolved.
func gitFileTarget(gitFile string) (string, bool) {
	fi, err := os.Lstat(gitFile)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return "", false
	}
	b, err := os.ReadFile(gitFile)
	if err != nil {
		return "", false
	}
	target, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "gitdir: ")
	if !ok || target == "" || strings.ContainsAny(target, "\n\r") {
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(gitFile), target)
	}
	target = filepath.Clean(target)
	if real, err := filepath.EvalSymlinks(target); err == nil {
		target = real
	}
	return target, true
}

// gitHead reports a HEAD git may take: a file, or a symbolic link
// (into refs/, to a branch that need not exist yet).
func gitHead(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && (fi.Mode().IsRegular() || fi.Mode()&os.ModeSymlink != 0)
}

// statDir and statExists follow symbolic links, as git does when it looks
// at a candidate repository's objects and refs.
func statDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func statExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func regular(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func directory(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// gitDir returns the directory a git command line runs in: its cwd moved
// by each literal -C among git's global options, wherever it stands
// (git --no-pager -C DIR); "" when unknown.
func gitDir(argv []string, cwd string) string {
	dir := cwd
	for i := 1; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "-C" && i+1 < len(argv):
			i++
			if dir == "" {
				return ""
			}
			next := argv[i]
			if !filepath.IsAbs(next) {
				next = filepath.Join(dir, next)
			}
			dir = next
		case a == "-c":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return dir // the subcommand
		}
	}
	return dir
}

// gitSubcommand returns git's subcommand in argv, after its global options.
func gitSubcommand(argv []string) string {
	if i := gitSubIndex(argv); i < len(argv) {
		return argv[i]
	}
	return ""
}

// gitSubArgs returns the words after git's subcommand.
func gitSubArgs(argv []string) []string {
	if i := gitSubIndex(argv); i < len(argv) {
		return argv[i+1:]
	}
	return nil
}

// gitSubIndex returns where git's subcommand stands in argv, after its
// global options; len(argv) when there is none.
func gitSubIndex(argv []string) int {
	for i := 1; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "-C" || a == "-c":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return i
		}
	}
	return len(argv)
}

// gitOperands reports whether argv has a word after the subcommand that is
// not an option.
func gitOperands(argv []string) bool {
	seen := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !seen {
			if a == "-C" || a == "-c" {
				i++
			} else if !strings.HasPrefix(a, "-") {
				seen = true
			}
			continue
		}
		if !strings.HasPrefix(a, "-") {
			return true
		}
	}
	return false
}

// hasNoIndex reports git's --no-index, or an abbreviation of it.
func hasNoIndex(argv []string) bool {
	for _, a := range argv {
		if a == "--" {
			return false
		}
		if x, ok := strings.CutPrefix(a, "--no-i"); ok && strings.HasPrefix("ndex", x) {
			return true
		}
	}
	return false
}

// gitTreeWriters are the git subcommands that write files of the work tree
// from the repository's objects (a branch, a stash, a commit).
var gitTreeWriters = map[string]bool{"checkout": true, "switch": true, "restore": true, "reset": true, "stash": true,
	"merge": true, "pull": true, "rebase": true, "cherry-pick": true, "revert": true, "read-tree": true,
	"checkout-index": true, "sparse-checkout": true, "submodule": true, "bisect": true, "clean": true}

// gitTreeWrite says why a git command that writes the work tree from the
// repository is for a person: the repository holds a path no agent may
// write (a committed .claude/settings.json, a subagent, a hook script),
// which a branch or a stash the agent made could carry. "" when it holds
// none, or the command writes no files.
func (s *evalState) gitTreeWrite(argv []string, dir string) string {
	sub := gitSubcommand(argv)
	if !gitTreeWriters[sub] {
		return ""
	}
	var rest []string
	for i, a := range argv {
		if a == sub {
			rest = argv[i+1:]
			break
		}
	}
	switch sub {
	case "stash":
		if len(rest) > 0 && (rest[0] == "list" || rest[0] == "show" || rest[0] == "drop" || rest[0] == "clear" || rest[0] == "create") {
			return "" // lists or drops
		}
	case "reset":
		writes := false
		for _, a := range rest {
			writes = writes || a == "--hard" || a == "--merge" || a == "--keep"
		}
		if !writes {
			return "" // the index and HEAD only
		}
	case "bisect":
		if len(rest) > 0 && (rest[0] == "log" || rest[0] == "view" || rest[0] == "visualize") {
			return ""
		}
	}
	root, ok := workTreeRoot(dir)
	if !ok {
		return "" // no repository here: git fails
	}
	stashSave := sub == "stash" && (len(rest) == 0 || rest[0] == "push" || rest[0] == "save" || strings.HasPrefix(rest[0], "-"))
	if sub == "clean" || stashSave {
		// It removes untracked (with -x, ignored) files: an agent's local
		// settings are often both. git stash (push, save) puts modified
		// files back as committed, and with -u or -a removes untracked or
		// ignored ones.
		for _, a := range rest {
			if a == "-n" || a == "--dry-run" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'n') {
				return ""
			}
		}
		if agentSettingsInside(root) || agentSettingsInside(dir) {
			return "git " + sub + " may remove or change an agent's hook settings in " + root
		}
		return ""
	}
	_, common, ok := gitDirs(root)
	if !ok {
		return "git " + sub + " writes files from a repository whose .git cannot be followed here"
	}
	h, err := s.p.history.history(common)
	if err != nil {
		return "git " + sub + " writes files from the repository, whose objects cannot be read here (" + err.Error() + ")"
	}
	// git restore PATH..., git checkout [REV] -- PATH...: only those.
	var only []string
	if sub == "restore" || sub == "checkout" {
		dashes := sub == "restore"
		for _, a := range rest {
			switch {
			case a == "--":
				dashes = true
			case strings.HasPrefix(a, "-") || !dashes:
			case strings.ContainsAny(a, "*?[:") || strings.Contains(a, shell.Dyn):
				only = nil
				dashes = false // a pattern: every path counts
			default:
				only = append(only, filepath.Join(dir, a))
			}
		}
		if !dashes {
			only = nil
		}
	}
	for _, p := range h.paths {
		abs := filepath.Join(root, filepath.FromSlash(p))
		if only != nil && !slices.ContainsFunc(only, func(o string) bool { return under(abs, o) }) {
			continue
		}
		if agentSettings(abs) || agentCode(abs) || s.p.protectedBy(abs) != "" || gitInternal(abs) {
			return "git " + sub + " may write " + abs + " from the repository, a file no agent may write unasked (agent settings, hooks, approvalbot's own)"
		}
	}
	return ""
}

// gitPathWriters are git subcommands that write files at paths given as
// arguments (a bundle, a new work tree or clone, a checkout under a
// prefix, an archive).
var gitPathWriters = map[string]bool{"bundle": true, "worktree": true, "clone": true, "checkout-index": true,
	"read-tree": true, "submodule": true, "init": true, "archive": true, "format-patch": true}

// gitPathWrite says why such a command, given a path no agent may write
// or one beside an agent's settings (as an operand or an option's value,
// --prefix=.claude/agents/), is for a person; "" otherwise.
func (s *evalState) gitPathWrite(argv []string, dir string) string {
	sub := gitSubcommand(argv)
	if !gitPathWriters[sub] {
		return ""
	}
	after := false
	for _, a := range argv[1:] {
		if !after {
			after = a == sub
			continue
		}
		pieces, _ := argPaths(a)
		for _, c := range pieces {
			ps, ok := resolvePath(c, dir, s.p.home)
			if !ok || c == "" {
				continue
			}
			real := s.realPath(ps.abs, ps.raw, dir)
			why := s.writeProtected(ps.abs, real)
			if why == "" && (agentSettingsBelow(filepath.Dir(ps.abs)) || agentSettingsBelow(ps.abs)) {
				why = "it would write beside an agent's settings"
			}
			if why != "" {
				return "git " + sub + " may write " + ps.abs + ": " + why
			}
		}
	}
	return ""
}

// gitNotesPrinted says why git log (show, reflog, stash list ...) run in
// dir may print a note: a blob no path names, which the history check
// cannot judge by name (git notes add -C <the .env blob>). "" when the
// repository has no notes or the line turns them off.
func gitNotesPrinted(argv []string, dir string) string {
	switch gitSubcommand(argv) {
	case "log", "show", "whatchanged", "reflog", "stash":
	default:
		return ""
	}
	for _, a := range argv {
		if a == "--no-notes" {
			return ""
		}
	}
	root, ok := workTreeRoot(dir)
	if !ok {
		return ""
	}
	_, common, ok := gitDirs(root)
	if !ok {
		return ""
	}
	if entries, err := os.ReadDir(filepath.Join(common, "refs", "notes")); err == nil && len(entries) > 0 {
		return "git prints the repository's notes, blobs no file name judges"
	}
	if b, err := os.ReadFile(filepath.Join(common, "packed-refs")); err == nil && strings.Contains(string(b), " refs/notes/") {
		return "git prints the repository's notes, blobs no file name judges"
	}
	return ""
}

package shell

// git: global options, subcommands, and every abbreviation of the long
// options that run programs or write files.

import (
	"slices"
	"strings"
)

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

// gitSignatureFormat reports a %G placeholder, with or without git's
// modifiers (%+G?, %-GS, % GK): they verify signatures, which runs gpg.
func gitSignatureFormat(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0 && i+1 < len(s); {
		j := i + 1
		if s[j] == '+' || s[j] == '-' || s[j] == ' ' {
			j++
		}
		if j < len(s) && s[j] == 'G' {
			return true
		}
		k := strings.IndexByte(s[i+1:], '%')
		if k < 0 {
			break
		}
		i += 1 + k
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

// gitDanger are git long options that run programs, write files or point
// git at other repositories. git accepts any unique prefix of a long
// option, so a word that is a prefix of one of these asks.
var gitDanger = []string{"output", "show-signature", "output-directory", "ext-diff", "textconv", "exec", "exec-path", "upload-pack",
	"receive-pack", "open-files-in-pager", "config", "config-env", "template", "separate-git-dir", "git-dir",
	"work-tree", "extcmd", "tool", "strategy", "upload-archive", "remote", "gpg-sign"}

// gitExact are options that are prefixes of a gitDanger entry but are
// options of their own (an exact name wins over an abbreviation).
var gitExact = map[string]bool{"text": true, "exit-code": true}

// gitShortDanger lists short options that run programs or write files, per
// subcommand.
var gitShortDanger = map[string]string{"format-patch": "o", "rebase": "xS", "grep": "O", "clone": "cu", "archive": "o",
	// -S signs: gpg runs (and writes its files in ~/.gnupg); tag -s, -u.
	"commit": "S", "merge": "S", "cherry-pick": "S", "revert": "S", "am": "S", "commit-tree": "S", "tag": "su"}

func (a *analyzer) git(fs []field) (string, string) {
	args := fs[1:]
	for _, f := range args {
		if f.dyn && !f.glob || f.glob && !safeGlobStart(f.pat) {
			return "not understood: a word only known at run time in git's arguments (it could be an option)", ""
		}
		if gitSignatureFormat(f.s) {
			return "", "git's %G format placeholders verify signatures, which runs gpg"
		}
	}
	// git -C DIR: the files git reads are relative to DIR.
	saved := a.st.cwd
	defer func() { a.st.cwd = saved }()
	movedByC := false
	i := 0
globals:
	for i < len(args) {
		s := args[i].s
		name, _, _ := strings.Cut(s, "=")
		switch name {
		case "-C":
			movedByC = true
			if i+1 < len(args) {
				// Relative to the directory so far (-C a -C b is a/b).
				p, ok := a.abs(args[i+1].s)
				a.st.cwd = ""
				if ok {
					a.st.cwd = p
				}
			}
			i += 2
		case "-c", "--config-env":
			return "", "git " + name + " sets configuration that can run programs"
		case "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--bare", "--attr-source", "--list-cmds":
			return "", "git " + name + " points git at other files"
		case "--exec-path":
			if s != name {
				return "", "git --exec-path= runs git's programs from another directory"
			}
			i++
		case "-P", "--no-pager", "-p", "--paginate", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
			"--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch", "--no-advice",
			"--version", "--help", "--html-path", "--man-path", "--info-path":
			i++
		default:
			if strings.HasPrefix(s, "-") {
				return "not understood: git global option " + s, ""
			}
			break globals
		}
	}
	if i >= len(args) {
		return "", ""
	}
	sub := args[i].s
	rest := args[i+1:]
	shortDanger := gitShortDanger[sub]
	noIndex := false
	// git config --file F --includes prints what F's include.path and
	// includeIf name, files no read rule saw.
	includes, fromFile, noIncludes := false, false, false
	for j := 0; j < len(rest); j++ {
		s := rest[j].s
		if s == "--" {
			break
		}
		if long, ok := strings.CutPrefix(s, "--"); ok {
			name, val, hasVal := strings.Cut(long, "=")
			// git takes any unique prefix of a long option.
			name = gitLongName(sub, name)
			if name == "no-index" {
				noIndex = true
			}
			if name == "recurse-submodules" && (sub == "grep" || sub == "ls-files") || name == "submodule" && hasVal && val == "diff" {
				// The history of a submodule is not read here.
				return "not understood: git " + sub + " " + s + " prints files from submodules, whose history is not judged", ""
			}
			if sub == "config" {
				switch neg, isNeg := strings.CutPrefix(name, "no-"); {
				case name == "includes":
					includes = true
				case isNeg && neg != "" && strings.HasPrefix("includes", neg):
					includes, noIncludes = false, true
				case name == "file":
					fromFile = true
				case name == "blob":
					// --blob=REV:PATH prints PATH as REV has it: a read of
					// PATH, from history.
					fromFile = true
					if !hasVal {
						if j+1 >= len(rest) {
							return "not understood: git config --blob without its value", ""
						}
						j++
						val = rest[j].s
					}
					rev, p, ok := strings.Cut(val, ":")
					if !ok || p == "" {
						return "not understood: git config --blob " + val + " (an object the analysis cannot name a file for)", ""
					}
					a.addRead(field{s: p}, "git config --blob", false)
					a.addRead(field{s: "."}, "git config --blob", false)
					a.an.Reads[len(a.an.Reads)-1].History = true
					a.an.Reads[len(a.an.Reads)-1].Revisions = []string{rev}
					continue
				}
			}
			if gitExact[name] {
				continue
			}
			if neg, ok := strings.CutPrefix(name, "no-"); ok && neg != "" {
				for _, m := range gitModeOptions {
					if strings.HasPrefix(m, neg) {
						return "", "git " + sub + " --" + name + " undoes the mode option --" + m + " a rule may rely on"
					}
				}
			}
			for _, d := range gitDanger {
				if strings.HasPrefix(d, name) {
					return "", "git " + sub + " --" + name + " may run a program or write a file (it abbreviates --" + d + ")"
				}
			}
			if name == "untracked" && sub == "grep" {
				noIndex = true
			}
			if gitFileOption(sub, "--"+name) {
				if !hasVal && j+1 < len(rest) {
					j++
					val = rest[j].s
				}
				a.addRead(field{s: val}, "git "+sub+" --"+name, false)
			}
			continue
		}
		if len(s) > 1 && s[0] == '-' {
			fromFile = fromFile || sub == "config" && s[1] == 'f'
			if strings.ContainsAny(s[1:], shortDanger) && shortDanger != "" {
				return "", "git " + sub + " " + s + " may run a program or write a file"
			}
			// A bundle of short options (-wS FILE, -wSFILE): the first
			// letter that names a file takes the rest of the word, or
			// the next word. (A letter inside an earlier option's value
			// only makes this read more than git does.)
			for k := 1; k < len(s); k++ {
				opt := "-" + s[k:k+1]
				if !gitFileOption(sub, opt) {
					continue
				}
				if k+1 < len(s) {
					a.addRead(field{s: s[k+1:]}, "git "+sub+" "+opt, false)
				} else if j+1 < len(rest) {
					j++
					a.addRead(rest[j], "git "+sub+" "+opt, false)
				}
				break
			}
		}
	}
	if includes && fromFile {
		return "not understood: git config --includes follows the include.path and includeIf of the file given to files it names, which are not judged as reads", ""
	}
	if sub == "config" && !fromFile && !noIncludes {
		// Reading its own files, git config follows their includes: the
		// files they name are read (and printed by --list).
		a.addRead(field{s: "."}, "git config", false)
		a.an.Reads[len(a.an.Reads)-1].GitIncludes = true
	}
	if sub == "diff" && !noIndex {
		// git diff goes outside the index on its own when a path is
		// outside the work tree: such operands are read.
		outside := movedByC
		for _, f := range rest {
			if !strings.HasPrefix(f.s, "-") && (strings.HasPrefix(f.s, "/") || strings.HasPrefix(f.s, "~") || strings.Contains(f.s, "..") || f.dyn) {
				outside = true
			}
		}
		for _, f := range rest {
			if outside && f.s != "--" && !strings.HasPrefix(f.s, "-") {
				// Then every path operand is read, inside the tree or not.
				a.addRead(f, "git diff", true)
			}
		}
	}
	switch sub {
	case "apply", "am":
		// The files a patch writes are named inside it, which the analysis
		// does not read (.claude/settings.json, a hook script ...).
		check := false
		for _, f := range rest {
			switch f.s {
			case "--check", "--stat", "--numstat", "--summary":
				check = true
			case "--apply":
				check = false
			}
		}
		if !check || sub == "am" {
			return "not understood: git " + sub + " writes the files named inside its patch, which the analysis does not read", ""
		}
	case "mv", "rm":
		// Paths in the work tree, moved or removed: git mv SRC... DST is
		// cp's shape; git rm writes (removes) each.
		var ops []field
		dashes, cached := false, false
		for _, f := range rest {
			switch {
			case f.s == "--" && !dashes:
				dashes = true
			case strings.HasPrefix(f.s, "-") && !dashes:
				cached = cached || strings.HasPrefix("--cached", f.s) && len(f.s) > 3
			default:
				ops = append(ops, f)
			}
		}
		switch {
		case cached: // the index only: the work tree is left alone
		case sub == "mv":
			a.copyLike("git mv", opMove, nil, ops, false)
		default:
			for _, f := range ops {
				a.writeTarget("git rm", f)
			}
		}
	case "add", "stage", "hash-object", "update-index":
		// Each file named is read into the object store, from where a
		// push or a show sends it on: a file the Read rules deny is not
		// added. With -f, ignored files too, below each directory.
		force, all := false, false
		for _, f := range rest {
			if f.s == "--" {
				break
			}
			if f.s == "-f" || strings.HasPrefix(f.s, "--f") && strings.HasPrefix("--force", f.s) ||
				len(f.s) > 1 && f.s[0] == '-' && f.s[1] != '-' && strings.ContainsRune(f.s, 'f') && sub != "hash-object" {
				force = true
			}
			if f.s == "-A" || f.s == "--all" || strings.HasPrefix(f.s, "--al") || len(f.s) > 1 && f.s[0] == '-' && f.s[1] != '-' && strings.ContainsRune(f.s, 'A') {
				all = true
			}
		}
		// A directory (or pattern) stages what .gitignore does not
		// ignore below it, everything with -f; hash-object and
		// update-index read exactly the files named.
		walk := func(f field) {
			if sub == "hash-object" || sub == "update-index" {
				a.addRead(f, "git "+sub, false)
				return
			}
			n := len(a.an.Reads)
			a.addRead(f, "git "+sub, true)
			if len(a.an.Reads) > n { // nothing is added for - or /dev/null
				a.an.Reads[n].Addable = !force
			}
		}
		operands := 0
		for _, f := range rest {
			switch {
			case f.s == "--" || strings.HasPrefix(f.s, "-") && !f.glob:
			case strings.HasPrefix(f.s, ":") || f.glob || strings.ContainsAny(f.s, "*?["):
				operands++
				walk(field{s: "."}) // git's own pathspec matching: the whole tree
			default:
				operands++
				walk(f)
			}
		}
		if operands == 0 && all {
			walk(field{s: "."})
		}
	}
	if history, revs := gitPrintsHistory(sub, rest); history {
		a.addRead(field{s: "."}, "git "+sub, false)
		a.an.Reads[len(a.an.Reads)-1].History = true
		a.an.Reads[len(a.an.Reads)-1].Revisions = revs
		a.an.Reads[len(a.an.Reads)-1].Dashed = slices.ContainsFunc(rest, func(f field) bool { return f.s == "--" })
	}
	if sub == "show" || sub == "cat-file" {
		for _, f := range rest {
			if f.s == "--batch-all-objects" {
				return "not understood: git cat-file --batch-all-objects prints every object of the repository", ""
			}
			// REV:PATH prints that file as the revision has it: a read of
			// PATH (a secret committed once is still in history).
			if _, p, ok := strings.Cut(f.s, ":"); ok && p != "" && !strings.HasPrefix(f.s, "-") {
				a.addRead(field{s: p}, "git "+sub+" "+f.s, false)
			}
		}
	}
	if !noIndex {
		switch sub {
		case "grep", "diff":
			// Both read tracked files from the work tree as they are on
			// disk (a tracked .env too): the tree is read, as by grep -r.
			// (The gate widens it to the work tree's top: git diff shows
			// the whole tree from a subdirectory, and :/ names the top.)
			a.addRead(field{s: "."}, "git "+sub, true)
			a.an.Reads[len(a.an.Reads)-1].Tracked = true
		case "status":
			// git status -v shows the staged diff, -vv the work tree's too.
			for _, f := range rest {
				if f.s == "--" {
					break
				}
				if strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "--") && strings.ContainsRune(f.s, 'v') ||
					strings.HasPrefix(f.s, "--v") && strings.HasPrefix("--verbose", f.s) {
					a.addRead(field{s: "."}, "git status", true)
					a.an.Reads[len(a.an.Reads)-1].Tracked = true
					a.addRead(field{s: "."}, "git status", false)
					a.an.Reads[len(a.an.Reads)-1].History = true
					break
				}
			}
		case "blame", "annotate":
			// Their file operand is read from the work tree.
			for _, f := range rest {
				if f.s != "--" && !strings.HasPrefix(f.s, "-") {
					a.addRead(f, "git "+sub, false)
				}
			}
		}
	}
	if noIndex && (sub == "diff" || sub == "grep") {
		// Outside the index: the paths named, or the whole tree, are read.
		paths, pattern := 0, sub == "grep"
		for _, f := range rest {
			if strings.HasPrefix(f.s, "-") {
				continue
			}
			if pattern {
				pattern = false // git grep's first operand is the pattern
				continue
			}
			paths++
			if strings.ContainsAny(f.s, "*?[") || strings.HasPrefix(f.s, ":") {
				// A pathspec: git matches it itself, dot files and all
				// (`'*'` names .env): the whole tree counts as read.
				f = field{s: "."}
			}
			a.addRead(f, "git "+sub+" --no-index", true)
		}
		if paths == 0 {
			a.addRead(field{s: "."}, "git "+sub+" --no-index", true)
		}
	}
	return "", ""
}

// gitModeOptions select a read-only mode of a subcommand (`git branch
// --list`); their negations (any abbreviation) undo it behind a rule that
// names the mode.
var gitModeOptions = []string{"list", "get", "get-all", "get-regexp", "get-urlmatch", "show-current", "dry-run"}

// gitLongOptions are the long options of git subcommands the analysis
// acts on, so that an abbreviation resolves to them.
var gitLongOptions = map[string][]string{
	"grep":     {"no-index", "untracked", "pathspec-from-file", "file"},
	"diff":     {"no-index", "pathspec-from-file", "orderfile"},
	"ls-files": {"exclude-from", "exclude-per-directory"},
	"log":      {"orderfile"},
	"show":     {"orderfile"},
	"blame":    {"contents", "ignore-revs-file"},
	"config":   {"file", "blob", "includes"},
	"commit":   {"file", "template", "pathspec-from-file"},
	"tag":      {"file"},
	"notes":    {"file"},
}

// gitLongName resolves an abbreviated long option of git subcommand sub to
// the option the analysis knows it as; other names come back unchanged.
func gitLongName(sub, name string) string {
	if name == "" {
		return name
	}
	found := ""
	for _, l := range gitLongOptions[sub] {
		if l == name {
			return l
		}
		if strings.HasPrefix(l, name) {
			if found != "" {
				return name // ambiguous: git refuses it
			}
			found = l
		}
	}
	if found != "" {
		return found
	}
	return name
}

// gitFileOption reports an option of a git subcommand whose value is a
// file git reads (and may print, whole or in part).
func gitFileOption(sub, opt string) bool {
	switch opt {
	case "--pathspec-from-file":
		return true
	}
	switch sub {
	case "commit", "tag", "notes":
		return opt == "-F" || opt == "--file" || opt == "-t" || opt == "--template"
	case "config":
		return opt == "-f" || opt == "--file"
	case "grep":
		return opt == "-f" || opt == "--file"
	case "ls-files":
		// --exclude-per-directory=NAME reads NAME in every directory.
		return opt == "-X" || opt == "--exclude-from" || opt == "--exclude-per-directory"
	case "diff", "log", "show", "diff-tree", "diff-index", "diff-files":
		return opt == "-O" || opt == "--orderfile"
	case "blame", "annotate":
		return opt == "--contents" || opt == "--ignore-revs-file" || opt == "-S"
	case "apply", "am":
		return false // their patch operands are judged by their rules
	}
	return false
}

// gitPrintsHistory reports a git command line that may print files as
// committed, from the object store rather than the work tree: show and
// cat-file of anything, log with a patch (or a search of the patches,
// which tells their content one question at a time), diff and grep given a
// revision or the index, stash show, range-diff. operands are its words
// before "--" that may be revisions (or, for diff and grep, files).
// gitRevOption are the options that select revisions from the refs
// (setup_revisions), which git diff takes as its revisions.
var gitRevOption = map[string]bool{"all": true, "branches": true, "tags": true, "remotes": true, "glob": true,
	"reflog": true, "exclude": true, "alternate-refs": true, "indexed-objects": true, "bisect": true, "not": true,
	"exclude-hidden": true, "single-worktree": true}

func gitPrintsHistory(sub string, rest []field) (history bool, operands []string) {
	pattern := sub == "grep"
	index := false
	for j := 0; j < len(rest); j++ {
		f := rest[j]
		if f.s == "--" {
			break
		}
		if strings.HasPrefix(f.s, "--") {
			name, _, hasVal := strings.Cut(f.s[2:], "=")
			switch {
			case name == "":
			case sub == "cat-file" && strings.HasPrefix(name, "batch"):
				// Object names come on standard input: any object.
				operands = append(operands, "")
			case strings.HasPrefix("cached", name) || strings.HasPrefix("staged", name) || strings.HasPrefix("merge-base", name):
				index = true
			case sub == "diff" && name == "stdin":
				operands = append(operands, "") // revisions on standard input
			case sub == "diff" && gitRevOption[name]:
				// Revisions picked from the refs (--branches='ol*').
				operands = append(operands, "--"+name)
			case sub == "grep" && (strings.HasPrefix("regexp", name) || name == "file" || name == "fi" || name == "fil"):
				pattern = false
				if !hasVal {
					j++
				}
			case sub == "log" || sub == "whatchanged" || sub == "reflog":
				for _, p := range []string{"patch", "unified", "cc", "dd", "word-diff", "color-words", "binary", "full-diff", "pickaxe", "diff-merges", "remerge-diff", "textconv", "function-context", "check"} {
					if strings.HasPrefix(p, name) || strings.HasPrefix(name, p) {
						history = true
					}
				}
			}
			continue
		}
		if strings.HasPrefix(f.s, "-") && len(f.s) > 1 {
			switch {
			case sub == "grep":
				// -e PATTERN, -f FILE, bundled or not (-ie PAT, -eT.P):
				// the pattern is given, so the next operand is a revision.
				if k := strings.IndexAny(f.s[1:], "ef"); k >= 0 {
					pattern = false
					if k+2 == len(f.s) {
						j++ // its value is the next word
					}
				}
			case (sub == "log" || sub == "whatchanged" || sub == "reflog") && strings.ContainsAny(f.s[1:], "pucUmSGLW"):
				// Anywhere in a bundle (-sp); a letter inside another
				// option's value only makes this stricter.
				history = true
			}
			continue
		}
		if pattern {
			pattern = false
			continue
		}
		if f.dyn || f.glob {
			index = true // only known at run time: any revision
		}
		operands = append(operands, f.s)
	}
	switch sub {
	case "tag", "branch", "for-each-ref":
		// A ref may point at a blob: %(raw) and %(contents) print it.
		for _, f := range rest {
			if strings.Contains(f.s, "%(raw") || strings.Contains(f.s, "%(*raw") || strings.Contains(f.s, "%(contents") ||
				strings.Contains(f.s, "%(*contents") || strings.Contains(f.s, "%(body") || f.dyn {
				return true, []string{""}
			}
		}
		return false, nil
	case "show", "cat-file", "range-diff", "diff-tree", "diff-index", "format-patch", "archive", "bundle", "fast-export":
		return true, operands
	case "stash":
		if len(rest) > 0 && rest[0].s == "list" {
			// stash list takes log's options (-p prints the stashes).
			h, _ := gitPrintsHistory("log", rest[1:])
			return h, operands
		}
		return len(rest) > 0 && rest[0].s == "show", operands
	case "log", "whatchanged", "reflog":
		return history, operands
	case "diff", "grep":
		return index || len(operands) > 0, operands
	}
	return false, nil
}

package gate

import (
	"os"
	"path/filepath"
	"strings"
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
	if !directory(dir) {
		return "", false // git cannot run there
	}
	for d := filepath.Clean(dir); ; {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if fi.IsDir() {
				return "", true
			}
			return "git would follow " + filepath.Join(d, ".git") + " (not a directory) to another repository", true
		}
		if regular(filepath.Join(d, "HEAD")) && (directory(filepath.Join(d, "objects")) && directory(filepath.Join(d, "refs")) ||
			exists(filepath.Join(d, "commondir"))) {
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
// by each literal -C; "" when unknown.
func gitDir(argv []string, cwd string) string {
	dir := cwd
	for i := 1; i+1 < len(argv) && argv[i] == "-C"; i += 2 {
		if dir == "" {
			return ""
		}
		next := argv[i+1]
		if !filepath.IsAbs(next) {
			next = filepath.Join(dir, next)
		}
		dir = next
	}
	return dir
}

// gitSubcommand returns git's subcommand in argv, after its global options.
func gitSubcommand(argv []string) string {
	for i := 1; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "-C" || a == "-c":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
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

package gate

import (
	"os"
	"path/filepath"
)

// gitRepoHazard says why the repository git would use when run in dir is
// not an ordinary .git directory, "" when it is (or there is none). git
// finds a bare repository by its contents in any directory, and follows a
// .git file to any other; a config written there (core.fsmonitor,
// core.pager, diff.*.textconv) runs programs on a plain `git status`.
func gitRepoHazard(dir string) string {
	if !directory(dir) {
		return "" // git cannot run there: it finds no repository
	}
	for d := filepath.Clean(dir); ; {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if fi.IsDir() {
				return ""
			}
			return "git would follow " + filepath.Join(d, ".git") + " (not a directory) to another repository"
		}
		if regular(filepath.Join(d, "HEAD")) && (directory(filepath.Join(d, "objects")) && directory(filepath.Join(d, "refs")) ||
			exists(filepath.Join(d, "commondir"))) {
			// A bare repository, or one whose objects and refs are in the
			// directory its commondir file names.
			return "git would use " + d + " as a repository (its config can run programs)"
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
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

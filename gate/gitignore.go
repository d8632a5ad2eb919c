package gate

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// gitAddable keeps the files below dir that `git add` (without -f) would
// stage: tracked ones, and untracked ones .gitignore does not surely
// ignore. Only the plain forms of .gitignore are understood (names, globs,
// anchored paths, directories); a negation (`!`), `**` or an escape makes
// no file surely ignored, so they all count: a wrong "ignored" would let a
// secret be staged, a wrong "not ignored" only asks. The user's global
// excludes file is not read, for the same reason.
func gitAddable(dir string, files []string) []string {
	return notIgnored(dir, files, false)
}

// rgVisible keeps the files ripgrep searches below dir: those its ignore
// rules do not leave out. ripgrep reads .gitignore like git, and also
// .ignore and .rgignore, whose `!` lines can bring back a file .gitignore
// ignores: with any of those on the way, every file is kept.
func rgVisible(dir string, files []string) []string {
	for _, f := range files {
		if b := filepath.Base(f); b == ".ignore" || b == ".rgignore" {
			return files
		}
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if exists(filepath.Join(d, ".ignore")) || exists(filepath.Join(d, ".rgignore")) {
			return files
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return notIgnored(dir, files, true)
}

// notIgnored keeps the files below dir that git's ignore rules do not
// leave out (tracked ones always); every file when they cannot be read
// exactly. Files in a repository nested below the work tree are kept: git
// does not stage them, and ripgrep reads no ignore file above it. With
// fromDir, as ripgrep does, dir and the directories above it are not
// matched, only what is below (rg TODO private/ searches an ignored
// directory); git adds nothing from an ignored one.
func notIgnored(dir string, files []string, fromDir bool) []string {
	root, ok := workTreeRoot(dir)
	if !ok {
		return files
	}
	skip := 0
	if fromDir {
		rel, err := filepath.Rel(root, filepath.Clean(dir))
		if err != nil || strings.HasPrefix(rel, "..") {
			return files
		}
		if rel != "." {
			skip = strings.Count(filepath.ToSlash(rel), "/") + 1
		}
	}
	nested := map[string]bool{}
	gitDir, common, ok := gitDirs(root)
	if !ok {
		return files
	}
	ig := &ignorer{root: root, dirs: map[string][]ignorePattern{}}
	if !ig.load(filepath.Join(common, "info", "exclude"), "") {
		return files
	}
	// A tracked file is staged whatever .gitignore says.
	tracked, ok := readIndex(gitDir)
	if !ok && exists(filepath.Join(gitDir, "index")) {
		return files
	}
	out := files[:0:0]
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		if err != nil || strings.HasPrefix(rel, "..") || tracked[filepath.ToSlash(rel)] {
			out = append(out, f)
			continue
		}
		if inNestedRepo(root, filepath.Dir(f), nested) {
			out = append(out, f)
			continue
		}
		ignored, sure := ig.ignored(filepath.ToSlash(rel), skip)
		if !sure {
			return files
		}
		if !ignored {
			out = append(out, f)
		}
	}
	return out
}

type ignorePattern struct {
	pat      string // path.Match syntax
	anchored bool   // relative to the .gitignore's directory
	dirOnly  bool
}

type ignorer struct {
	root string
	dirs map[string][]ignorePattern // directory (slash, relative) → its .gitignore
	bad  bool
}

// load reads one ignore file for the patterns of directory base; false
// when it holds a form this reader does not understand.
func (ig *ignorer) load(file, base string) bool {
	f, err := os.Open(file)
	if err != nil {
		return os.IsNotExist(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(strings.TrimSuffix(sc.Text(), "\r"), " ")
		if strings.HasSuffix(line, "\t") || strings.HasSuffix(line, "\\") {
			// git keeps a trailing tab (.env<TAB> ignores no .env),
			// ripgrep drops it; an escaped trailing space: not followed.
			return false
		}
		if !utf8.ValidString(line) {
			return false // ripgrep stops reading the file there; git does not
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if reversedRange(line) {
			return false // ripgrep drops such a pattern; Go's matcher keeps it
		}
		if strings.HasPrefix(line, "!") || strings.Contains(line, "**") || strings.ContainsRune(line, '\\') ||
			strings.Contains(line, "[!") || strings.Contains(line, "[^") {
			return false // git's negated classes are [!..]; Go's path.Match reads them otherwise
		}
		p := ignorePattern{}
		if strings.HasSuffix(line, "/") {
			p.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		if strings.Contains(line, "/") {
			p.anchored, line = true, strings.TrimPrefix(line, "/")
		}
		if _, err := path.Match(line, ""); err != nil {
			return false
		}
		p.pat = line
		ig.dirs[base] = append(ig.dirs[base], p)
	}
	return sc.Err() == nil
}

// reversedRange reports a bracket expression with a range whose ends are
// reversed ([z-a]).
func reversedRange(p string) bool {
	for i := 0; i+2 < len(p); i++ {
		if p[i+1] == '-' && p[i+2] != ']' && p[i] != '[' && p[i] > p[i+2] && strings.Contains(p[:i+1], "[") {
			return true
		}
	}
	return false
}

// ignored reports whether the file at rel (slash-separated, relative to the
// work tree) is ignored, and whether that is sure. Its first skip
// directories are not matched themselves (ripgrep's search root and above).
func (ig *ignorer) ignored(rel string, skip int) (ignored, sure bool) {
	parts := strings.Split(rel, "/")
	// Each directory from the root down to the file's own may hold a
	// .gitignore; .git/info/exclude is read as the root's.
	for i := 0; i < len(parts); i++ {
		base := strings.Join(parts[:i], "/")
		if _, ok := ig.dirs[base+"\x00"]; !ok {
			ig.dirs[base+"\x00"] = nil
			if !ig.load(filepath.Join(ig.root, filepath.FromSlash(base), ".gitignore"), base) {
				return false, false
			}
		}
		for _, p := range ig.dirs[base] {
			// The path below base: any of its leading parts that is a
			// directory, or the file itself, may match.
			rest := parts[i:]
			for j := 1; j <= len(rest); j++ {
				isDir := j < len(rest)
				if p.dirOnly && !isDir || isDir && i+j <= skip {
					continue
				}
				name := rest[j-1]
				sub := strings.Join(rest[:j], "/")
				if p.anchored {
					if m, _ := path.Match(p.pat, sub); m {
						return true, true
					}
				} else if m, _ := path.Match(p.pat, name); m {
					return true, true
				}
			}
		}
	}
	return false, true
}

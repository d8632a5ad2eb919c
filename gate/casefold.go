package gate

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode"
)

// On a file system that folds case (macOS's default, Windows drives under
// WSL), .Claude/Settings.json is .claude/settings.json and .ENV is .env:
// rules and protections written in one spelling must meet every other.
// A path is judged as written and in its folded form, the stricter wins.

// folded returns abs as the file system there spells it when the file
// system folds case: each component that exists in its spelling on disk,
// the rest in lower case. "" when it does not fold, or nothing changes.
func (s *evalState) folded(abs string) string {
	if s.c.Remote || !s.foldsAt(abs) {
		return ""
	}
	out := "/"
	rest := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	for i, name := range rest {
		if name == "" {
			continue
		}
		next := filepath.Join(out, name)
		if _, err := os.Lstat(next); err == nil {
			if onDisk, ok := spelledOnDisk(out, name); ok {
				next = filepath.Join(out, onDisk)
			}
			out = next
			continue
		}
		// Not there: whatever is made is found in any spelling.
		out = filepath.Join(out, strings.ToLower(strings.Join(rest[i:], "/")))
		break
	}
	if out == abs {
		return ""
	}
	return out
}

// spelledOnDisk returns the name of the entry of dir that name folds to.
func spelledOnDisk(dir, name string) (string, bool) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) > maxListed {
		return "", false
	}
	for _, e := range entries {
		if e.Name() == name {
			return name, true
		}
	}
	for _, e := range entries {
		if strings.EqualFold(e.Name(), name) {
			return e.Name(), true
		}
	}
	return "", false
}

// foldsAt reports whether the file system holding abs folds case: the
// nearest existing directory above it with a letter in its name is found
// under its name with the case of its letters swapped. Where nothing
// tells, macOS and Windows are taken to fold.
func (s *evalState) foldsAt(abs string) bool {
	if s.p.foldCase != nil {
		return s.p.foldCase(abs)
	}
	var seen []string // every directory on the way shares the answer
	v := runtime.GOOS == "darwin" || runtime.GOOS == "windows"
	for d := filepath.Dir(abs); d != "/" && d != "."; d = filepath.Dir(d) {
		if known, ok := s.folds[d]; ok {
			v = known
			break
		}
		seen = append(seen, d)
		base := filepath.Base(d)
		swapped := strings.Map(swapCase, base)
		if swapped == base {
			continue
		}
		fi, err := os.Lstat(d)
		if err != nil {
			continue
		}
		other, err := os.Lstat(filepath.Join(filepath.Dir(d), swapped))
		v = err == nil && os.SameFile(fi, other)
		break
	}
	if s.folds == nil {
		s.folds = map[string]bool{}
	}
	for _, d := range seen {
		s.folds[d] = v
	}
	return v
}

func swapCase(r rune) rune {
	if unicode.IsUpper(r) {
		return unicode.ToLower(r)
	}
	return unicode.ToUpper(r)
}

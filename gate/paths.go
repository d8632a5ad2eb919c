package gate

import (
	"path/filepath"
	"strings"
)

// subject is what a rule pattern is matched against: the text of a shell
// command or a tool name, or a path.
type subject struct {
	text string
	path *pathSubject
}

// pathSubject is a path as rules see it.
type pathSubject struct {
	abs    string // cleaned absolute path
	raw    string // absolute but not cleaned: ".." after a symlink is resolved physically
	base   string // its base name, for patterns without "/"
	rel    string // "./" + the path relative to the cwd, when inside
	inside bool   // the path is the cwd or below it
}

// cleanCwd returns the call's cwd cleaned, or "" when it is unusable
// (empty or relative): then nothing relative can be resolved.
func cleanCwd(cwd string) string {
	if cwd == "" || !filepath.IsAbs(cwd) || strings.ContainsRune(cwd, 0) {
		return ""
	}
	return filepath.Clean(cwd)
}

// resolvePath makes p absolute and clean: `~/` and `$HOME/` expand to home, a
// relative path is joined to cwd. ok is false when that is impossible (a
// relative path without a cwd, `~` without a home, a NUL byte).
func resolvePath(p, cwd, home string) (pathSubject, bool) {
	if p == "" || strings.ContainsRune(p, 0) {
		return pathSubject{}, false
	}
	p, ok := expandHome(p, home)
	if !ok {
		return pathSubject{}, false
	}
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return pathSubject{}, false
		}
		p = cwd + "/" + p // not Join: raw keeps ".." for the physical form
	}
	abs := filepath.Clean(p)
	ps := pathSubject{abs: abs, raw: p, base: filepath.Base(abs)}
	if cwd != "" {
		if abs == cwd {
			ps.rel, ps.inside = "./", true
		} else if rest, ok := strings.CutPrefix(abs, cwd); ok && (cwd == "/" || strings.HasPrefix(rest, "/")) {
			ps.rel, ps.inside = "./"+strings.TrimPrefix(rest, "/"), true
		}
	}
	return ps, true
}

// under reports whether path is dir or below it (both clean and absolute).
func under(path, dir string) bool {
	if path == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(path, dir) && path[len(dir)] == '/'
}

// protectedBy returns the protected path that abs is or lies below, or "".
func (p *Policy) protectedBy(abs string) string {
	for _, pr := range p.protected {
		if under(abs, pr) {
			return pr
		}
	}
	return ""
}

// protectedBelow returns a protected path that lies at or below abs (so
// removing or moving abs would take it along), or "".
func (p *Policy) protectedBelow(abs string) string {
	for _, pr := range p.protected {
		if under(pr, abs) {
			return pr
		}
	}
	return ""
}

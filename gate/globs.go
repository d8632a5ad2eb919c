package gate

import "strings"

// Deciding whether a shell pathname pattern (`/p/*.go`, or `/p/**` for a
// recursive read) can name a file that a rule pattern matches: both are
// turned into token lists and intersected. Character classes are read as
// any one character, so the answer errs towards "they may intersect",
// which makes the gate ask.

type globTok struct {
	c    byte
	kind byte // 'c' a literal byte, '?' one byte, '*' any run
	// For shell patterns: the wildcard does not match "/" (a plain `*`),
	// nor a "." that starts a name.
	noSlash, noLeadDot bool
}

// shellGlobToks tokenizes a pathname pattern (path.Match syntax). With
// recursive, `*` also crosses "/" (the names find or grep -r reach).
func shellGlobToks(p string, recursive bool) []globTok {
	out, _ := globToks(p, true, recursive)
	if recursive {
		// Names below a directory: any run of further path.
		out = append(out, globTok{kind: '*'})
	}
	return out
}

// ruleGlobToks tokenizes a rule pattern (gobwas syntax, `*` crossing "/"),
// expanding {a,b} alternatives; ok is false for syntax it does not follow.
func ruleGlobToks(p string) ([][]globTok, bool) {
	if i := strings.IndexByte(p, '{'); i >= 0 {
		j := strings.IndexByte(p[i:], '}')
		if j < 0 || strings.IndexByte(p[i+1:i+j], '{') >= 0 {
			return nil, false
		}
		var all [][]globTok
		for _, alt := range strings.Split(p[i+1:i+j], ",") {
			ts, ok := ruleGlobToks(p[:i] + alt + p[i+j+1:])
			if !ok {
				return nil, false
			}
			all = append(all, ts...)
			if len(all) > 64 {
				return nil, false
			}
		}
		return all, true
	}
	out, ok := globToks(p, false, false)
	if !ok {
		return nil, false
	}
	return [][]globTok{out}, true
}

// globToks tokenizes a glob. For a shell pattern (shell), a wildcard does
// not match "/" (unless recursive) nor a "." that starts a name, and an
// unclosed "[" is literal; for a rule pattern, an unclosed "[" is not
// followed (ok false).
func globToks(p string, shell, recursive bool) ([]globTok, bool) {
	out := make([]globTok, 0, len(p))
	for i := 0; i < len(p); i++ {
		segStart := shell && (i == 0 || p[i-1] == '/')
		switch c := p[i]; c {
		case '\\':
			if i+1 < len(p) {
				i++
				out = append(out, globTok{c: p[i], kind: 'c'})
			}
		case '*', '?':
			out = append(out, globTok{kind: c, noSlash: shell && !recursive, noLeadDot: segStart})
		case '[':
			end := bracketEnd(p, i)
			if end < 0 {
				if !shell {
					return nil, false
				}
				out = append(out, globTok{c: '[', kind: 'c'})
				continue
			}
			out = append(out, globTok{kind: '?', noSlash: shell, noLeadDot: segStart})
			i = end
		default:
			out = append(out, globTok{c: c, kind: 'c'})
		}
	}
	return out, true
}

// bracketEnd returns the index of the "]" that closes the bracket
// expression starting at p[i], as bash and fnmatch read it: a "!" or "^"
// first, a "]" first is a member, and [:class:], [=c=] and [.c.] are
// members; -1 when it is not closed (then "[" is literal).
func bracketEnd(p string, i int) int {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++
	}
	for ; j < len(p); j++ {
		switch p[j] {
		case ']':
			return j
		case '\\':
			j++
		case '[':
			if j+1 < len(p) && (p[j+1] == ':' || p[j+1] == '=' || p[j+1] == '.') {
				close := strings.Index(p[j+2:], string(p[j+1])+"]")
				if close < 0 {
					return -1
				}
				j += 2 + close + 1
			}
		}
	}
	return -1
}

// intersects reports whether some string matches both token lists.
func intersects(a, b []globTok) bool {
	type key struct {
		i, j   int
		ai, bj bool // the star at a[i] / b[j] has already matched a byte
	}
	seen := make(map[key]bool, len(a)*2)
	var walk func(k key) bool
	walk = func(k key) bool {
		i, j := k.i, k.j
		if i == len(a) && j == len(b) {
			return true
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		// A star may end here.
		if i < len(a) && a[i].kind == '*' && walk(key{i + 1, j, false, k.bj}) {
			return true
		}
		if j < len(b) && b[j].kind == '*' && walk(key{i, j + 1, k.ai, false}) {
			return true
		}
		if i == len(a) || j == len(b) {
			return false
		}
		x, y := a[i], b[j]
		if x.kind == '*' && k.ai {
			x.noLeadDot = false
		}
		if y.kind == '*' && k.bj {
			y.noLeadDot = false
		}
		// Both consume one byte: find whether such a byte exists.
		ok := false
		switch {
		case x.kind == 'c' && y.kind == 'c':
			ok = x.c == y.c
		case x.kind == 'c':
			ok = tokAccepts(y, x.c)
		case y.kind == 'c':
			ok = tokAccepts(x, y.c)
		default:
			ok = true // some byte other than "/" and "." fits both
		}
		if !ok {
			return false
		}
		next := key{i + 1, j + 1, false, false}
		if x.kind == '*' {
			next.i, next.ai = i, true // a star may go on
		}
		if y.kind == '*' {
			next.j, next.bj = j, true
		}
		return walk(next)
	}
	return walk(key{})
}

// tokAccepts reports whether a wildcard token can match byte c.
func tokAccepts(t globTok, c byte) bool {
	if t.noSlash && c == '/' {
		return false
	}
	return !(t.noLeadDot && c == '.')
}

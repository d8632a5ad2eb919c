package gate

import (
	"path"
	"strings"
	"testing"

	"github.com/gobwas/glob"
)

func TestIntersects(t *testing.T) {
	cases := []struct {
		shell, rule string
		recursive   bool
		want        bool
	}{
		{"/p/*.go", "*.env", false, false},
		{"/p/*", "*.env", false, true},             // prod.env
		{"/p/*", "/p/.env", false, false},          // * skips names starting with "."
		{"/p/.e*", "*.env", false, true},           // .env
		{"/p/?env", "*.env", false, false},         // ? does not match a leading "."
		{"/p/[.]env", "*.env", false, false},       // bash: a class never matches a leading "."
		{"/p", "*.env", true, true},                // everything below /p
		{"/p", "/q/*", true, false},                // nothing below /p is in /q
		{"/p/*/x.go", "/p/a/b/x.go", false, false}, // * does not cross "/"
		{"/p/*/x.go", "/p/a/x.go", false, true},
		{"/p/*.go", "*credentials*", false, true}, // credentials.go
		{"/p/a*b", "*{x,ab}", false, true},
		{"/p/a*b", "*{x,y}", false, false},
		{"/h/.ssh/id_*", "~/.ssh/*", false, false}, // ~ is not expanded here: no match
		{"/p/x.[[:alpha:]]ey", "*.key", false, true},
		{"/p/x.[]k]ey", "*.key", false, true},
		{"/p/x.[[=k=]]ey", "*.key", false, true},
		{"/p/x.[[.k.]]ey", "*.key", false, true},
		{"/p/.[[:alpha:]]nv", "*.env", false, true},
		{"/p/[[:alpha:]].env", "*.env", false, true},
	}
	for _, c := range cases {
		alts, ok := ruleGlobToks(c.rule)
		if !ok {
			t.Fatalf("rule %q does not tokenize", c.rule)
		}
		got := false
		for _, alt := range alts {
			got = got || intersects(shellGlobToks(c.shell, c.recursive), alt)
		}
		if got != c.want {
			t.Errorf("intersects(%q, %q, recursive=%v) = %v, want %v", c.shell, c.rule, c.recursive, got, c.want)
		}
	}
}

// shellMatch is bash's pathname matching for one path: path.Match per
// element, where a leading "." must be matched literally.
func shellMatch(pattern, name string) bool {
	ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
	if len(ps) != len(ns) {
		return false
	}
	for i := range ps {
		if strings.HasPrefix(ns[i], ".") && !strings.HasPrefix(ps[i], ".") {
			return false
		}
		if m, err := path.Match(ps[i], ns[i]); err != nil || !m {
			return false
		}
	}
	return true
}

// FuzzIntersects: whenever one name matches both a shell pattern and a
// rule pattern, intersects must say they intersect (it may say so more
// often, never less: a miss would let a read of a denied file through).
func FuzzIntersects(f *testing.F) {
	f.Add("/p/*.go", "*.env", "/p/a.env")
	f.Add("/p/.e*", "*.env", "/p/.env")
	f.Add("/p/[a-c]x", "*x", "/p/bx")
	f.Add("/p/*/y", "/p/?/*", "/p/a/y")
	f.Fuzz(func(t *testing.T, shell, rule, name string) {
		if strings.ContainsAny(shell+rule, "{}") || !strings.HasPrefix(name, "/") {
			return
		}
		g, err := glob.Compile(rule)
		if err != nil || !g.Match(name) || !shellMatch(shell, name) {
			return
		}
		alts, ok := ruleGlobToks(rule)
		if !ok {
			return // not followed: the gate asks
		}
		for _, alt := range alts {
			if intersects(shellGlobToks(shell, false), alt) {
				return
			}
		}
		t.Fatalf("%q matches shell pattern %q and rule %q, but intersects says no", name, shell, rule)
	})
}

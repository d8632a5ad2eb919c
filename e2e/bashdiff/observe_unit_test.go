//go:build e2e

package bashdiff

import (
	"reflect"
	"testing"

	"approvalbot/shell"
)

func TestParseXtrace(t *testing.T) {
	trace := "+ x=1\n" +
		"+ y=2\n" +
		"+ echo a\n" +
		"+ a=(1 \"it's\")\n" +
		"+ declare -a a\n" +
		"+ echo 'a\nb' 'it'\\''s' 'a b' ''\n" +
		"+ [[ -n it's ]]\n" +
		"+ ((  x=3  ))\n" +
		"+ for f in a\n" +
		"+ case a in\n" +
		"++ echo sub\n" +
		"+ declare -x 'Z=a b'\n" +
		"+ z='q\nr'\n" +
		"+ '[' -n x ']'\n" +
		"+ echo $'\\x01\\n' é\n" +
		"+ 'x=1'\n"
	want := [][]string{
		{"echo", "a"},
		{"declare", "-a", "a=(1 \"it's\")"},
		{"echo", "a\nb", "it's", "a b", ""},
		{"echo", "sub"},
		{"declare", "-x", "Z=a b"},
		{"[", "-n", "x", "]"},
		{"echo", "\x01\n", "é"},
		{"x=1"},
	}
	var got [][]string
	for _, e := range parseXtrace([]byte(trace)) {
		got = append(got, e.Argv)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseXtrace:\n got %q\nwant %q", got, want)
	}
}

func TestParseStubLog(t *testing.T) {
	got, ok := parseStubLog([]byte("2\x00ls\x00-la\x003\x00echo\x00a\nb\x00\x00"))
	want := []executed{{[]string{"ls", "-la"}, "stub"}, {[]string{"echo", "a\nb", ""}, "stub"}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("parseStubLog = %q, %v; want %q", got, ok, want)
	}
	if _, ok := parseStubLog([]byte("3\x00ls\x00")); ok {
		t.Error("a truncated log parsed as well-formed")
	}
}

func TestMatchArgv(t *testing.T) {
	d := shell.Dyn
	for _, c := range []struct {
		rep   []string
		globs []bool
		got   []string
		from  string
		want  bool
	}{
		{[]string{"ls", "-la"}, nil, []string{"ls", "-la"}, "xtrace", true},
		{[]string{"ls", "-la"}, nil, []string{"ls", "-l"}, "xtrace", false},
		{[]string{"ls"}, nil, []string{"ls", "x"}, "xtrace", false},
		{[]string{"echo", d}, nil, []string{"echo", "anything at all"}, "xtrace", true},
		{[]string{"echo", d}, nil, []string{"echo", "a", "b"}, "xtrace", false},
		{[]string{"echo", d}, nil, []string{"echo", ""}, "xtrace", true},
		{[]string{"echo", "a" + d + "c"}, nil, []string{"echo", "a\nbc"}, "xtrace", true},
		{[]string{"echo", "a" + d + "c"}, nil, []string{"echo", "ab"}, "xtrace", false},
		{[]string{"cat", "*.go"}, []bool{false, true}, []string{"cat", "a.go", "b.go"}, "xtrace", true},
		{[]string{"cat", "*.go"}, []bool{false, true}, []string{"cat"}, "xtrace", true},
		{[]string{"cat", "*.go"}, []bool{false, true}, []string{"cat", "*.go"}, "xtrace", true},
		{[]string{"cat", "*.go"}, []bool{false, true}, []string{"cat", "a.go", "x.txt"}, "xtrace", false},
		{[]string{"cat", "*.go"}, nil, []string{"cat", "a.go"}, "xtrace", false},
		{[]string{"cat", "*"}, []bool{false, true}, []string{"cat", ".env"}, "xtrace", false},
		{[]string{"cat", ".*"}, []bool{false, true}, []string{"cat", ".env"}, "xtrace", true},
		{[]string{"cat", "*/*.txt"}, []bool{false, true}, []string{"cat", "sub/c.txt"}, "xtrace", true},
		{[]string{"cat", "*"}, []bool{false, true}, []string{"cat", "sub/c.txt"}, "xtrace", false},
		{[]string{"cat", "[ab].go"}, []bool{false, true}, []string{"cat", "a.go", "b.go"}, "xtrace", true},
		{[]string{"cat", "[!a].go"}, []bool{false, true}, []string{"cat", "a.go"}, "xtrace", false},
		{[]string{"test", d, "-eq", "1"}, []bool{false, true, false, false}, []string{"test", "a[$(x", "/y)]", "-eq", "1"}, "xtrace", true},
		{[]string{"echo", d}, []bool{false, true}, []string{"echo"}, "stub", true},
		{[]string{"/usr/bin/git", "status"}, nil, []string{"git", "status"}, "stub", true},
		{[]string{"/usr/bin/git", "status"}, nil, []string{"git", "status"}, "xtrace", false},
	} {
		got := matchArgv(reported{c.rep, c.globs}, executed{c.got, c.from})
		if got != c.want {
			t.Errorf("matchArgv(%q %v, %q %s) = %v, want %v", c.rep, c.globs, c.got, c.from, got, c.want)
		}
	}
}

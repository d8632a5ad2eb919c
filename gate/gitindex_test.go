package gate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// GitRun runs the real git in dir, isolated from the user's configuration
// (exported for the package's external tests).
func GitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestReadIndexOfRealGit: the index real git writes, in each version and
// object format, lists exactly the tracked files (v4 compresses names
// against the previous one, so similar long names are used).
func TestReadIndexOfRealGit(t *testing.T) {
	files := []string{"a.go", "dir/sub/long-name-one.txt", "dir/sub/long-name-two.txt", "dir/x", "z/.env.example", "名前.md"}
	for _, tt := range []struct {
		name   string
		init   []string
		extend bool // an entry with extended flags (intent to add): version 3
	}{
		{"v2", []string{"init", "-q"}, false},
		{"v3", []string{"init", "-q"}, true},
		{"v4", []string{"init", "-q"}, false},
		{"sha256", []string{"init", "-q", "--object-format=sha256"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			GitRun(t, dir, tt.init...)
			for _, f := range append(files, "untracked.txt", "added-later.txt") {
				p := filepath.Join(dir, f)
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(f), 0o644)
			}
			GitRun(t, dir, append([]string{"add"}, files...)...)
			want := append([]string(nil), files...)
			if tt.extend {
				GitRun(t, dir, "add", "-N", "added-later.txt")
				want = append(want, "added-later.txt")
			}
			if tt.name == "v4" {
				GitRun(t, dir, "update-index", "--index-version", "4")
			}
			got, ok := readIndex(filepath.Join(dir, ".git"))
			if !ok {
				t.Fatal("index not read")
			}
			var names []string
			for n := range got {
				names = append(names, n)
			}
			sort.Strings(names)
			sort.Strings(want)
			if fmt.Sprint(names) != fmt.Sprint(want) {
				t.Errorf("tracked %v, want %v", names, want)
			}
			// Of the files listed, the tracked ones; and every tracked file
			// the list misses (git prints a deleted one from the index).
			kept := trackedOnly(dir, []string{filepath.Join(dir, "a.go"), filepath.Join(dir, "untracked.txt")})
			var rel []string
			for _, k := range kept {
				r, _ := filepath.Rel(dir, k)
				rel = append(rel, filepath.ToSlash(r))
			}
			sort.Strings(rel)
			if fmt.Sprint(rel) != fmt.Sprint(want) {
				t.Errorf("trackedOnly kept %v, want %v", rel, want)
			}
		})
	}
}

// TestParseIndexRefusesDamage: truncated or altered index bytes never
// panic, and anything not read exactly gives ok=false, so every file of
// the tree is judged.
func TestParseIndexRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	GitRun(t, dir, "init", "-q")
	for i := range 20 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", i)), nil, 0o644)
	}
	GitRun(t, dir, "add", ".")
	b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n += 7 {
		if got, ok := parseIndex(b[:n], 20); ok && len(got) == 20 {
			t.Errorf("a truncated index (%d of %d bytes) read as whole", n, len(b))
		}
	}
	if _, ok := parseIndex(append([]byte("DIRX"), b[4:]...), 20); ok {
		t.Error("a bad signature was read")
	}
}

func FuzzParseIndex(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01"), 20)
	f.Fuzz(func(t *testing.T, b []byte, hashLen int) {
		if hashLen != 20 && hashLen != 32 {
			return
		}
		parseIndex(b, hashLen) // must not panic or loop
	})
}

// TestTrackedOnlyKeepsSubmodules: files of a nested repository are not in
// the outer index, yet git grep --recurse-submodules and git diff
// --submodule=diff read them: they count as read.
func TestTrackedOnlyKeepsSubmodules(t *testing.T) {
	dir := t.TempDir()
	GitRun(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "a.go"), nil, 0o644)
	GitRun(t, dir, "add", "a.go")
	sub := filepath.Join(dir, "vendor", "lib")
	os.MkdirAll(sub, 0o755)
	GitRun(t, sub, "init", "-q")
	secret := filepath.Join(sub, "deep", ".env")
	os.MkdirAll(filepath.Dir(secret), 0o755)
	os.WriteFile(secret, []byte("S=1"), 0o600)
	untracked := filepath.Join(dir, "notes.txt")
	os.WriteFile(untracked, nil, 0o644)
	kept := trackedOnly(dir, []string{filepath.Join(dir, "a.go"), untracked, secret})
	if fmt.Sprint(kept) != fmt.Sprint([]string{filepath.Join(dir, "a.go"), secret}) {
		t.Errorf("kept %v: want a.go and the submodule's file, not the untracked one", kept)
	}
}

// TestGitAddableAgainstRealGit: for each .gitignore, when real git would
// stage a file the Read rules deny (`git add -n`), `git add .` under a
// rule allowing git is never allowed; where git ignores every secret, it
// is (the plain forms of .gitignore are understood; `!` and `**` ask).
func TestGitAddableAgainstRealGit(t *testing.T) {
	p, err := Compile(PolicySpec{Rules: []RuleSpec{
		{Tool: "Read", Pattern: "*", Action: Allow}, {Tool: "Read", Pattern: "*.env", Action: Deny},
		{Tool: "Bash", Pattern: "*", Action: Ask}, {Tool: "Bash", Pattern: "git *", Action: Allow}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ignore     string
		understood bool
		tracked    bool // .env was added (-f) before .gitignore, then changed
	}{
		{"", true, false}, {".env\n", true, false}, {"*.env\n", true, false}, {"/.env\n", true, false}, {"sub/\n", true, false},
		{"sub\n.env\n", true, false}, {".env\n/sub/.env\n", true, false}, {"# c\n\n*.env\n", true, false},
		{"*.e?v\n", true, false}, {"[.]env\n", true, false},
		{"*.env\n!sub/.env\n", false, false}, {"**/.env\n", false, false}, {"[!x]env\n", false, false},
		// A tracked file is staged whatever .gitignore says.
		{".env\n", true, true}, {"*.env\n", true, true},
	} {
		dir := t.TempDir()
		GitRun(t, dir, "init", "-q")
		for f, c := range map[string]string{"main.go": "x", ".env": "S=1", "sub/.env": "S=2", "sub/a.go": "y"} {
			os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
			os.WriteFile(filepath.Join(dir, f), []byte(c), 0o644)
		}
		if tt.tracked {
			GitRun(t, dir, "add", "-f", ".env")
			os.WriteFile(filepath.Join(dir, ".env"), []byte("S=changed"), 0o644)
		}
		if tt.ignore != "" {
			os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(tt.ignore), 0o644)
		}
		// git's own files are not work-tree files: never staged.
		os.WriteFile(filepath.Join(dir, ".git", "leak.env"), []byte("S=3"), 0o644)
		for _, line := range []string{"git add .", "git add -A", "git add sub"} {
			ev := p.Evaluate(Call{Tool: "Bash", Input: []byte(`{"command":"` + line + `"}`), Cwd: dir}, Env{})
			cmd := exec.Command("git", append([]string{"add", "-n"}, strings.Fields(line)[2:]...)...)
			cmd.Dir = dir
			o, _ := cmd.Output() // git add -n of an ignored directory fails, staging nothing
			secret := strings.Contains(string(o), ".env'")
			switch {
			case secret && ev.Decision == Allow:
				t.Errorf("%q: %s stages %s and is allowed", tt.ignore, line, o)
			case !secret && tt.understood && ev.Decision != Allow:
				t.Errorf("%q: %s stages no secret (%s) but %s: %s", tt.ignore, line, o, ev.Decision, ev.Reason)
			}
		}
	}
}

// FoldCase makes p judge every path as on a file system that folds case
// (macOS's default), which this machine's is not.
func FoldCase(p *Policy) { p.foldCase = func(string) bool { return true } }

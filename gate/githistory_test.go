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

// GitOutput runs the real git in dir, isolated like GitRun, and returns its
// output.
func GitOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// historyRepo makes a repository with enough history for git to store
// trees as deltas once packed: files edited over many commits in nested
// directories, a .env committed and then removed, and a stash.
func historyRepo(t *testing.T, init ...string) string {
	t.Helper()
	dir := t.TempDir()
	GitRun(t, dir, append([]string{"init", "-q"}, init...)...)
	GitRun(t, dir, "config", "user.email", "a@b")
	GitRun(t, dir, "config", "user.name", "a")
	write := func(p, s string) {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for j := 0; j < 150; j++ {
		write(fmt.Sprintf("big/a-file-with-a-long-name-%03d.txt", j), "0")
	}
	for i := 0; i < 40; i++ {
		// One file of a large directory changes per commit: git stores
		// its trees as deltas of each other.
		write(fmt.Sprintf("big/a-file-with-a-long-name-%03d.txt", i), fmt.Sprint("v", i))
		for j := 0; j < 12; j++ {
			write(fmt.Sprintf("pkg%d/sub/file%02d.go", j%4, j), fmt.Sprintf("package x // %d %d\n", i, j*i%5))
		}
		write(fmt.Sprintf("docs/note%d.md", i%7), strings.Repeat("x", i))
		if i == 5 {
			write("config/.env", "SECRET=1\n")
		}
		if i == 9 {
			GitRun(t, dir, "rm", "-q", "--cached", "config/.env")
			os.Remove(filepath.Join(dir, "config/.env"))
		}
		GitRun(t, dir, "add", "-A")
		GitRun(t, dir, "commit", "-q", "-m", fmt.Sprint("c", i))
	}
	write("stashed/only.txt", "x")
	GitRun(t, dir, "add", "stashed/only.txt")
	GitRun(t, dir, "stash", "-q")
	return dir
}

// gitHistoryPaths is what real git says: every file of every tree
// reachable from every ref, the stash and the reflogs.
func gitHistoryPaths(t *testing.T, dir string) []string {
	seen := map[string]bool{}
	for _, c := range strings.Fields(GitOutput(t, dir, "rev-list", "--all", "--reflog")) {
		for _, p := range strings.Split(GitOutput(t, dir, "ls-tree", "-r", "--name-only", "-z", c), "\x00") {
			if p != "" {
				seen[p] = true
			}
		}
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestHistoryPathsOfRealGit: the store read directly, loose and packed
// (deltas, an aggressive repack), SHA-1 and SHA-256, holds every path git
// itself lists in the history, the removed .env included.
func TestHistoryPathsOfRealGit(t *testing.T) {
	for _, tt := range []struct {
		name string
		init []string
		gc   []string
	}{
		{"loose", nil, nil},
		{"packed", nil, []string{"gc", "-q"}},
		{"aggressive", nil, []string{"repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=250"}},
		{"sha256 packed", []string{"--object-format=sha256"}, []string{"gc", "-q"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := historyRepo(t, tt.init...)
			if tt.gc != nil {
				GitRun(t, dir, tt.gc...)
				if n := GitOutput(t, dir, "count-objects", "-v"); !strings.Contains(n, "\ncount: 0\n") && !strings.HasPrefix(n, "count: 0\n") {
					t.Fatalf("objects left loose after %v:\n%s", tt.gc, n)
				}
			}
			if tt.gc != nil {
				packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
				deltas := 0
				for _, l := range strings.Split(GitOutput(t, dir, append([]string{"verify-pack", "-v"}, packs...)...), "\n") {
					if f := strings.Fields(l); len(f) >= 7 && f[1] == "tree" {
						deltas++
					}
				}
				if deltas == 0 {
					t.Fatal("no tree stored as a delta: the test does not cover deltas")
				}
			}
			h, err := readHistory(filepath.Join(dir, ".git"))
			if err != nil {
				t.Fatal(err)
			}
			got := h.paths
			has := map[string]bool{}
			for _, p := range got {
				has[p] = true
			}
			want := gitHistoryPaths(t, dir)
			for _, p := range want {
				if !has[p] {
					t.Errorf("missing %s", p)
				}
			}
			if !has["config/.env"] || !has["stashed/only.txt"] {
				t.Errorf("the removed .env or the stash is missing: %v", got)
			}
			if len(got) != len(want) {
				t.Errorf("%d paths, git lists %d", len(got), len(want))
			}
		})
	}
}

// TestHistoryPathsFailClosed: what cannot be read whole is an error, never
// a shorter list.
func TestHistoryPathsFailClosed(t *testing.T) {
	dir := historyRepo(t)
	GitRun(t, dir, "gc", "-q")
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	b, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := 12; i < len(b)-20; i += len(b) / 40 {
		c := append([]byte(nil), b...)
		for j := i; j < i+16 && j < len(c)-20; j++ {
			c[j] ^= 0x5a
		}
		if err := os.WriteFile(packs[0], c, 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := readHistory(filepath.Join(dir, ".git"))
		if err == nil && !contains(h.paths, "config/.env") {
			t.Errorf("damaged at %d: no error and the .env is gone (%d paths)", i, len(h.paths))
		}
	}
	os.WriteFile(packs[0], b, 0o644)
	alt := filepath.Join(dir, ".git", "objects", "info", "alternates")
	os.MkdirAll(filepath.Dir(alt), 0o755)
	os.WriteFile(alt, []byte("/elsewhere/objects\n"), 0o644)
	if _, err := readHistory(filepath.Join(dir, ".git")); err == nil {
		t.Error("alternates: no error")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("base object"), []byte{11, 5, 0x90, 5})
	f.Add([]byte(""), []byte{0, 3, 3, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDelta(base, delta)
		if err == nil && len(out) > maxTreeBytes {
			t.Fatal("output beyond the bound")
		}
	})
}

func FuzzWalkTree(f *testing.F) {
	f.Add([]byte("100644 a.go\x00aaaaaaaaaaaaaaaaaaaa40000 dir\x00bbbbbbbbbbbbbbbbbbbb"))
	f.Add([]byte("100644 \x00"))
	f.Fuzz(func(t *testing.T, tree []byte) {
		n := 0
		_ = walkTree(tree, 20, func(name string, dir bool, id string) bool {
			if len(id) != 20 {
				t.Fatalf("object name of %d bytes", len(id))
			}
			n++
			return true
		})
		if n > len(tree)/22 {
			t.Fatalf("%d entries from %d bytes", n, len(tree))
		}
	})
}

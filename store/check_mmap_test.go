//go:build unix

package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// checkWith runs the checker on path, mapped or read page by page.
func checkWith(t *testing.T, path string, mapped bool) (err error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	c := &fileChecker{f: f, size: fi.Size()}
	if c.size == 0 {
		return nil
	}
	if mapped {
		data, unmap, err := mapFile(f, c.size)
		if err != nil {
			t.Fatalf("map: %v", err)
		}
		defer unmap()
		c.data = data
	}
	return guard(c.run)
}

// TestCheckMappedAndReadAgree: the mapped check (unix) and the page-by-page
// reads (other platforms) give the same verdict, word for word, on a good
// file and on many damaged ones.
func TestCheckMappedAndReadAgree(t *testing.T) {
	s, path := openTest(t)
	fillStore(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	refused := 0
	for i := range 300 {
		b := append([]byte(nil), good...)
		if i > 0 {
			for range 1 + rng.IntN(6) {
				b[rng.IntN(len(b))] = byte(rng.IntN(256))
			}
		}
		if i%50 == 49 {
			b = b[:rng.IntN(len(b))+1]
		}
		p := filepath.Join(dir, fmt.Sprintf("c%d.db", i))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		mapped, read := checkWith(t, p, true), checkWith(t, p, false)
		if fmt.Sprint(mapped) != fmt.Sprint(read) {
			t.Errorf("case %d: mapped %v, read %v", i, mapped, read)
		}
		if i == 0 && mapped != nil {
			t.Fatalf("the good file is refused: %v", mapped)
		}
		if mapped != nil {
			refused++
		}
	}
	if refused == 0 {
		t.Error("no damaged file was refused: the damage never reached the checked structure")
	}
	t.Logf("%d of 299 damaged files refused", refused)
}

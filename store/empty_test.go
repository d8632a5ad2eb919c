package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenRefusesEmptyFile: a store file that exists with zero bytes lost
// everything; Open refuses it unless told to start a new store in it.
func TestOpenRefusesEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "approvalbot.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(path, Options{}); !errors.Is(err, ErrEmptyFile) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of a zero-byte file: %v, want ErrEmptyFile", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("the refused file was changed: %v %v", fi, err)
	}
	s, err := Open(path, Options{InitEmpty: true})
	if err != nil {
		t.Fatalf("Open with InitEmpty: %v", err)
	}
	s.Close()
	// A new file (none there) is still created without the option.
	s, err = Open(filepath.Join(t.TempDir(), "new.db"), Options{})
	if err != nil {
		t.Fatalf("Open of a new file: %v", err)
	}
	s.Close()
}

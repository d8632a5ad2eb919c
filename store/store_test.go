package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// openTest opens a new store in a fresh directory and closes it at the end.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "approvalbot.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

// reopen closes s and opens its file again, to prove what was committed is
// on disk and not only in memory.
func reopen(t testing.TB, s *Store) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2, err := Open(s.Path(), Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	return s2
}

func TestOpenCreatesFileAndDirWithPrivateModes(t *testing.T) {
	_, path := openTest(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("file mode = %o, want 600", got)
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if got := di.Mode().Perm(); got != 0o700 {
		t.Errorf("dir mode = %o, want 700", got)
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		opts    Options
		wantIs  error
		wantMsg string
	}{
		{
			name: "newer schema version",
			prepare: func(t *testing.T, path string) {
				writeBolt(t, path, func(tx *bolt.Tx) error {
					b, err := tx.CreateBucket(bucketMeta)
					if err != nil {
						return err
					}
					return b.Put(metaSchema, u64(SchemaVersion+1))
				})
			},
			wantIs:  gate.ErrStoreVersion,
			wantMsg: "schema version 3",
		},
		{
			name: "garbage file",
			prepare: func(t *testing.T, path string) {
				junk := []byte(strings.Repeat("this is not a bbolt database\n", 1000))
				if err := os.WriteFile(path, junk, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			wantMsg: "not a bbolt database or damaged",
		},
		{
			name: "short garbage file",
			prepare: func(t *testing.T, path string) {
				if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			wantMsg: "open store",
		},
		{
			name: "another program's bbolt file",
			prepare: func(t *testing.T, path string) {
				writeBolt(t, path, func(tx *bolt.Tx) error {
					_, err := tx.CreateBucket([]byte("widgets"))
					return err
				})
			},
			wantMsg: "not an approvalbot store",
		},
		{
			name: "bad schema value",
			prepare: func(t *testing.T, path string) {
				writeBolt(t, path, func(tx *bolt.Tx) error {
					b, err := tx.CreateBucket(bucketMeta)
					if err != nil {
						return err
					}
					return b.Put(metaSchema, []byte("v1"))
				})
			},
			wantMsg: "bad schema version",
		},
		{
			name:    "read-only and missing",
			prepare: func(t *testing.T, path string) {},
			opts:    Options{ReadOnly: true},
			wantIs:  os.ErrNotExist,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			tt.prepare(t, path)
			s, err := Open(path, tt.opts)
			if err == nil {
				_ = s.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v does not wrap %v", err, tt.wantIs)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q should contain %q and the path", err, tt.wantMsg)
			}
			// A failed Open must not keep the file locked.
			if tt.opts.ReadOnly {
				return
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			s, err = Open(path, Options{LockTimeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatalf("Open of a new file at the same path: %v", err)
			}
			_ = s.Close()
		})
	}
}

// writeBolt makes a bbolt file by hand, as another version or program would.
func writeBolt(t *testing.T, path string, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenLockedFileFailsWithinTimeout(t *testing.T) {
	_, path := openTest(t)
	// bbolt's flock is per open file, so a second Open in this process is
	// refused as another process would be.
	done := make(chan error, 1)
	go func() {
		s, err := Open(path, Options{LockTimeout: 50 * time.Millisecond})
		if err == nil {
			_ = s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is locked by another approvalbot process") ||
			!strings.Contains(err.Error(), path) {
			t.Fatalf("second Open: got %v, want a locked error naming %s", err, path)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("second Open hung instead of timing out")
	}
}

func TestReadOnlyReadsAndRefusesWrites(t *testing.T) {
	s, path := openTest(t)
	ctx := context.Background()
	if _, err := s.AppendAudit(ctx, gate.AuditEntry{Event: "evaluated"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open: %v", err)
	}
	defer ro.Close()
	n, err := ro.VerifyAudit(ctx)
	if err != nil || n != 1 {
		t.Fatalf("VerifyAudit = %d, %v; want 1, nil", n, err)
	}
	if err := ro.PutValue(ctx, "k", "v"); err == nil {
		t.Fatal("PutValue on a read-only store succeeded")
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	s, _ := openTest(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.GetValue(context.Background(), "k"); err == nil {
		t.Fatal("GetValue after Close succeeded")
	}
}

func TestCancelledContextWritesNothing(t *testing.T) {
	s, _ := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := map[string]func() error{
		"CreateApproval": func() error { _, err := s.CreateApproval(ctx, newApproval("a1", "agent", "k")); return err },
		"UpdateApproval": func() error {
			_, err := s.UpdateApproval(ctx, "a1", func(*gate.Approval) error { return nil })
			return err
		},
		"GetApproval":    func() error { _, err := s.GetApproval(ctx, "a1"); return err },
		"FindApproval":   func() error { _, err := s.FindApproval(ctx, "agent", "k"); return err },
		"ListApprovals":  func() error { _, err := s.ListApprovals(ctx, ""); return err },
		"AddRule":        func() error { return s.AddRule(ctx, gate.AlwaysRule{ID: "r1"}) },
		"DeleteRule":     func() error { _, err := s.DeleteRule(ctx, "r1"); return err },
		"ListRules":      func() error { _, err := s.ListRules(ctx, ""); return err },
		"SetMode":        func() error { return s.SetMode(ctx, "a", gate.ModeStrict) },
		"GetMode":        func() error { _, err := s.GetMode(ctx, "a"); return err },
		"RememberDenial": func() error { return s.RememberDenial(ctx, gate.Denial{Key: "k"}) },
		"RecentDenial":   func() error { _, err := s.RecentDenial(ctx, "k", time.Now()); return err },
		"PruneDenials":   func() error { _, err := s.PruneDenials(ctx, time.Now()); return err },
		"AppendAudit":    func() error { _, err := s.AppendAudit(ctx, gate.AuditEntry{}); return err },
		"ListAudit":      func() error { _, err := s.ListAudit(ctx, 0, 0); return err },
		"VerifyAudit":    func() error { _, err := s.VerifyAudit(ctx); return err },
		"GetValue":       func() error { _, err := s.GetValue(ctx, "k"); return err },
		"PutValue":       func() error { return s.PutValue(ctx, "k", "v") },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: got %v, want context.Canceled", name, err)
		}
	}
	bg := context.Background()
	if all, err := s.ListApprovals(bg, ""); err != nil || len(all) != 0 {
		t.Errorf("ListApprovals after cancelled create = %d, %v; want none", len(all), err)
	}
	if _, err := s.GetValue(bg, "k"); !errors.Is(err, gate.ErrNotFound) {
		t.Errorf("GetValue after cancelled put: %v, want ErrNotFound", err)
	}
}

package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// fillStore writes some of everything, enough for a multi-level B+tree in
// the approvals and audit buckets.
func fillStore(t testing.TB, s *Store) {
	t.Helper()
	ctx := context.Background()
	for i := range 60 {
		id := fmt.Sprintf("ap-%04d", i)
		if _, err := s.CreateApproval(ctx, newApproval(id, "claude", "k-"+id)); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if _, err := s.UpdateApproval(ctx, id, decide(gate.StatusDenied, "ana")); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendN(t, s, 60)
	for i := range 10 {
		if err := s.AddRule(ctx, rule(fmt.Sprintf("r%d", i), "claude", "git *")); err != nil {
			t.Fatal(err)
		}
		if err := s.RememberDenial(ctx, gate.Denial{Key: fmt.Sprintf("d%d", i), Until: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetMode(ctx, "claude", gate.ModeStrict); err != nil {
		t.Fatal(err)
	}
	if err := s.PutValue(ctx, "telegram.offset", "12"); err != nil {
		t.Fatal(err)
	}
}

// exercise calls every method; on a damaged file each may fail, none may
// panic (a panic escaping would fail the whole test binary).
func exercise(s *Store) {
	ctx := context.Background()
	_, _ = s.ListApprovals(ctx, "")
	_, _ = s.ListApprovals(ctx, gate.StatusPending)
	_, _ = s.GetApproval(ctx, "ap-0001")
	_, _ = s.FindApproval(ctx, "claude", "k-ap-0002")
	_, _ = s.ListRules(ctx, "")
	_, _ = s.ListRules(ctx, "claude")
	_, _ = s.GetMode(ctx, "claude")
	_, _ = s.RecentDenial(ctx, "d1", t0)
	_, _ = s.GetValue(ctx, "telegram.offset")
	_, _ = s.ListAudit(ctx, 0, 0)
	_, _ = s.VerifyAudit(ctx)
	_, _ = s.UpdateApproval(ctx, "ap-0004", func(a *gate.Approval) error { a.Reason = "edited"; return nil })
	_, _ = s.CreateApproval(ctx, newApproval("new", "claude", "new"))
	_, _ = s.AppendAudit(ctx, gate.AuditEntry{Event: "evaluated"})
	_, _ = s.DeleteRule(ctx, "r3")
	_, _ = s.PruneDenials(ctx, t0.Add(2*time.Hour))
	_ = s.PutValue(ctx, "k", "v")
}

// TestCorruptFileNeverPanics damages a real store file in many ways (random
// bytes inside each page, whole pages zeroed, truncation) and opens and uses
// it. Errors are expected; a panic or a fault on the mapping is the failure.
func TestCorruptFileNeverPanics(t *testing.T) {
	s, path := openTest(t)
	fillStore(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	pages := len(good) / pageSize
	rng := rand.New(rand.NewPCG(1, 2)) // fixed: a failure must reproduce
	type damage struct {
		name string
		fn   func([]byte) []byte
	}
	var cases []damage
	for p := range pages {
		cases = append(cases, damage{fmt.Sprintf("page %d zeroed", p), func(b []byte) []byte {
			clear(b[p*pageSize : (p+1)*pageSize])
			return b
		}})
		for i := range 2 {
			cases = append(cases, damage{fmt.Sprintf("page %d random bytes #%d", p, i), func(b []byte) []byte {
				for range 1 + rng.IntN(8) {
					// Even variants hit the page header and first elements,
					// odd ones anywhere in the page.
					span := 64
					if i%2 == 1 {
						span = pageSize
					}
					b[p*pageSize+rng.IntN(span)] = byte(rng.IntN(256))
				}
				return b
			}})
		}
	}
	for _, n := range []int{0, 100, pageSize, 2*pageSize + 7, len(good) / 2, len(good) - 1} {
		cases = append(cases, damage{fmt.Sprintf("truncated to %d", n), func(b []byte) []byte { return b[:n] }})
	}
	dir := t.TempDir()
	opened := 0
	for i, c := range cases {
		p := filepath.Join(dir, fmt.Sprintf("c%d.db", i))
		if err := os.WriteFile(p, c.fn(append([]byte(nil), good...)), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("case %d: %s", i, c.name) // printed at once with -v: names a case that crashes
		for _, ro := range []bool{true, false} {
			s, err := Open(p, Options{ReadOnly: ro, LockTimeout: 100 * time.Millisecond})
			if err != nil {
				continue
			}
			opened++
			exercise(s)
			if err := s.Close(); err != nil {
				t.Logf("%s: Close: %v", c.name, err)
			}
		}
	}
	t.Logf("%d damaged files, %d opens succeeded and were used", len(cases), opened)
}

// TestCheckRefusesCrashShapes builds the damage that would crash bbolt
// itself (a cycle in the tree, an overflow count past the end of the file, a
// child page out of range) and expects Open to refuse the file.
func TestCheckRefusesCrashShapes(t *testing.T) {
	s, path := openTest(t)
	fillStore(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root uint64
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket(bucketApprovals).RootPage())
		if info, err := tx.Page(int(root)); err != nil || info.Type != "branch" {
			return fmt.Errorf("approvals root page %d is %+v, %v; the test needs a branch page", root, info, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	const pageSize = 4096
	off := int(root) * pageSize
	tests := []struct {
		name   string
		damage func(b []byte)
		want   string
	}{
		{"child points at its parent", func(b []byte) { binary.NativeEndian.PutUint64(b[off+16+8:], root) }, "reached twice"},
		{"huge overflow", func(b []byte) { binary.NativeEndian.PutUint32(b[off+12:], 0xFFFFFFFF) }, "overflow"},
		{"child out of range", func(b []byte) { binary.NativeEndian.PutUint64(b[off+16+8:], 1<<40) }, "outside the"},
		{"element count too large", func(b []byte) { binary.NativeEndian.PutUint16(b[off+10:], 0xFFFF) }, "do not fit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.db")
			b := append([]byte(nil), good...)
			tt.damage(b)
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(p, Options{})
			if err == nil {
				_ = s.Close()
				t.Fatal("Open accepted a damaged file")
			}
			if !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) {
				t.Errorf("Open: %v; want a damaged-file error naming the path and %q", err, tt.want)
			}
		})
	}
}

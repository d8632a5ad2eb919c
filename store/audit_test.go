package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// appendN writes n audit entries and returns them as stored.
func appendN(t testing.TB, s *Store, n int) []gate.AuditEntry {
	t.Helper()
	var out []gate.AuditEntry
	for i := range n {
		e, err := s.AppendAudit(context.Background(), gate.AuditEntry{
			Time:  t0.Add(time.Duration(i) * time.Second).In(time.FixedZone("CET", 3600)),
			Event: "decided", ApprovalID: fmt.Sprintf("a%d", i), Agent: "claude", Tool: "Bash",
			Digest: "d", Status: gate.StatusApproved, Decision: gate.Allow, By: "ana",
			// The store ignores whatever the caller puts here.
			Seq: 999, PrevHash: "forged", Hash: "forged",
		})
		if err != nil {
			t.Fatalf("AppendAudit %d: %v", i, err)
		}
		out = append(out, e)
	}
	return out
}

func TestAppendAuditChains(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	if n, err := s.VerifyAudit(ctx); err != nil || n != 0 {
		t.Fatalf("VerifyAudit on an empty log = %d, %v", n, err)
	}
	got := appendN(t, s, 5)
	for i, e := range got {
		if e.Seq != uint64(i+1) {
			t.Errorf("entry %d: Seq = %d", i, e.Seq)
		}
		wantPrev := ""
		if i > 0 {
			wantPrev = got[i-1].Hash
		}
		if e.PrevHash != wantPrev {
			t.Errorf("entry %d: PrevHash = %q, want %q", i, e.PrevHash, wantPrev)
		}
		if e.Time.Location() != time.UTC {
			t.Errorf("entry %d: time not stored in UTC: %v", i, e.Time)
		}
		// The documented formula, computed independently.
		c := e
		c.Hash = ""
		body, _ := json.Marshal(c)
		sum := sha256.Sum256(append([]byte(e.PrevHash), body...))
		if e.Hash != hex.EncodeToString(sum[:]) {
			t.Errorf("entry %d: Hash %s is not sha256(prev_hash || canonical json)", i, e.Hash)
		}
	}
	s = reopen(t, s)
	if n, err := s.VerifyAudit(ctx); err != nil || n != 5 {
		t.Fatalf("VerifyAudit = %d, %v; want 5, nil", n, err)
	}
	// The chain continues across a reopen.
	more := appendN(t, s, 1)
	if more[0].Seq != 6 || more[0].PrevHash != got[4].Hash {
		t.Errorf("entry after reopen = seq %d prev %s", more[0].Seq, more[0].PrevHash)
	}
	if n, err := s.VerifyAudit(ctx); err != nil || n != 6 {
		t.Fatalf("VerifyAudit = %d, %v; want 6, nil", n, err)
	}
}

func TestListAudit(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	all := appendN(t, s, 7)
	seqs := func(es []gate.AuditEntry) []uint64 {
		out := []uint64{}
		for _, e := range es {
			out = append(out, e.Seq)
		}
		return out
	}
	tests := []struct {
		after uint64
		limit int
		want  []uint64
	}{
		{0, 0, []uint64{1, 2, 3, 4, 5, 6, 7}},
		{0, 3, []uint64{1, 2, 3}},
		{3, 3, []uint64{4, 5, 6}},
		{6, 3, []uint64{7}},
		{7, 0, []uint64{}},
		{100, 0, []uint64{}},
		{^uint64(0), 0, []uint64{}},
	}
	for _, tt := range tests {
		got, err := s.ListAudit(ctx, tt.after, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(seqs(got), tt.want) {
			t.Errorf("ListAudit(%d, %d) = %v, want %v", tt.after, tt.limit, seqs(got), tt.want)
		}
	}
	got, _ := s.ListAudit(ctx, 0, 0)
	if !reflect.DeepEqual(got, all) {
		t.Errorf("ListAudit entries differ from what AppendAudit returned")
	}
	if _, err := s.ListAudit(ctx, 0, -1); !errors.Is(err, gate.ErrInvalid) {
		t.Errorf("ListAudit limit -1: %v, want ErrInvalid", err)
	}
}

// TestVerifyAuditDetectsTampering edits the file behind the store's back, as
// someone covering their tracks would, and expects the first broken seq.
func TestVerifyAuditDetectsTampering(t *testing.T) {
	tests := []struct {
		name    string
		tamper  func(b *bolt.Bucket, meta *bolt.Bucket) error
		wantSeq uint64
	}{
		{"field changed", func(b, _ *bolt.Bucket) error {
			v := bytes.Replace(b.Get(u64(3)), []byte(`"by":"ana"`), []byte(`"by":"eve"`), 1)
			return b.Put(u64(3), v)
		}, 3},
		{"decision changed in first entry", func(b, _ *bolt.Bucket) error {
			v := bytes.Replace(b.Get(u64(1)), []byte(`"decision":"allow"`), []byte(`"decision":"deny"`), 1)
			return b.Put(u64(1), v)
		}, 1},
		{"entry deleted", func(b, _ *bolt.Bucket) error { return b.Delete(u64(2)) }, 2},
		{"last entry deleted", func(b, _ *bolt.Bucket) error { return b.Delete(u64(5)) }, 5},
		{"entries swapped", func(b, _ *bolt.Bucket) error {
			v2, v4 := bytes.Clone(b.Get(u64(2))), bytes.Clone(b.Get(u64(4)))
			if err := b.Put(u64(2), v4); err != nil {
				return err
			}
			return b.Put(u64(4), v2)
		}, 2},
		{"entry renumbered", func(b, _ *bolt.Bucket) error {
			var e gate.AuditEntry
			if err := json.Unmarshal(b.Get(u64(4)), &e); err != nil {
				return err
			}
			e.Seq = 40
			v, _ := json.Marshal(e)
			return b.Put(u64(4), v)
		}, 4},
		{"entry appended by hand", func(b, _ *bolt.Bucket) error {
			return b.Put(u64(6), b.Get(u64(5)))
		}, 6},
		{"entry not json", func(b, _ *bolt.Bucket) error { return b.Put(u64(3), []byte("{")) }, 3},
		{"last entry rewritten with a valid hash", func(b, _ *bolt.Bucket) error {
			var e gate.AuditEntry
			if err := json.Unmarshal(b.Get(u64(5)), &e); err != nil {
				return err
			}
			e.By = "eve"
			var err error
			if e.Hash, _, err = auditHash(e, nil); err != nil {
				return err
			}
			v, _ := json.Marshal(e)
			return b.Put(u64(5), v)
		}, 5},
		{"head removed", func(_, meta *bolt.Bucket) error { return meta.Delete(metaAuditHead) }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, path := openTest(t)
			appendN(t, s, 5)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(func(tx *bolt.Tx) error {
				return tt.tamper(tx.Bucket(bucketAudit), tx.Bucket(bucketMeta))
			}); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = Open(path, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.VerifyAudit(context.Background())
			var ce *ChainError
			if !errors.As(err, &ce) {
				t.Fatalf("VerifyAudit: %v, want a ChainError", err)
			}
			if ce.Seq != tt.wantSeq {
				t.Errorf("VerifyAudit names seq %d (%v), want %d", ce.Seq, err, tt.wantSeq)
			}
		})
	}
}

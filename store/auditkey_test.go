package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// rehashChain edits entry 2 and rewrites every hash and the head with
// plain SHA-256, as someone who can write the file but has no key would.
func rehashChain(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, meta := tx.Bucket(bucketAudit), tx.Bucket(bucketMeta)
		prev := ""
		var last []byte
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var e gate.AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return err
			}
			if e.Seq == 2 {
				e.By = "eve"
			}
			e.PrevHash = prev
			h, _, err := auditHash(e, nil)
			if err != nil {
				return err
			}
			e.Hash, prev = h, h
			nv, _ := json.Marshal(e)
			if err := b.Put(append([]byte(nil), k...), nv); err != nil {
				return err
			}
			last = append([]byte(nil), k...)
		}
		return meta.Put(metaAuditHead, append(last, prev...))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestKeyedAuditChain: with an audit key, an edit re-hashed without the key
// is caught (without one it is not: that is what the key is for); entries
// written before the key keep verifying; entries removed from the end
// below the key's start are caught; the key file is 0600 and refused when
// others may read it.
func TestKeyedAuditChain(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	appendN(t, s, 2) // written before the key existed
	next, err := s.AuditNext(ctx)
	if err != nil || next != 3 {
		t.Fatalf("AuditNext = %d, %v; want 3", next, err)
	}
	keyPath := filepath.Join(filepath.Dir(path), AuditKeyFile)
	k, err := EnsureAuditKey(keyPath, next)
	if err != nil || k.From != 3 {
		t.Fatalf("EnsureAuditKey: %+v %v", k, err)
	}
	if fi, err := os.Stat(keyPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	if again, err := EnsureAuditKey(keyPath, 99); err != nil || again.From != 3 || string(again.Secret) != string(k.Secret) {
		t.Fatalf("a second EnsureAuditKey made another key: %+v %v", again, err)
	}
	s.UseAuditKey(k)
	appendN(t, s, 3)
	if n, err := s.VerifyAudit(ctx); err != nil || n != 5 {
		t.Fatalf("keyed chain: %d %v", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A copy to truncate later.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rehashChain(t, path)
	plain, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.VerifyAudit(ctx); err != nil {
		t.Fatalf("without the key a re-hashed chain verifies (that is the gap the key closes), got %v", err)
	}
	plain.Close()
	keyed, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	keyed.UseAuditKey(k)
	if _, err := keyed.VerifyAudit(ctx); err == nil || !strings.Contains(err.Error(), "hash does not match") {
		t.Fatalf("with the key a re-hashed chain must not verify: %v", err)
	}
	keyed.Close()

	// Entries removed from the end, down to before the key's start.
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, meta := tx.Bucket(bucketAudit), tx.Bucket(bucketMeta)
		var e gate.AuditEntry
		if err := json.Unmarshal(b.Get(u64(1)), &e); err != nil {
			return err
		}
		for seq := uint64(2); seq <= 5; seq++ {
			if err := b.Delete(u64(seq)); err != nil {
				return err
			}
		}
		return meta.Put(metaAuditHead, append(u64(1), e.Hash...))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	cut, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	cut.UseAuditKey(k)
	if _, err := cut.VerifyAudit(ctx); err == nil || !strings.Contains(err.Error(), "entries removed") {
		t.Fatalf("a chain cut below the key's start must not verify: %v", err)
	}

	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAuditKey(keyPath); err == nil {
		t.Fatal("a key file others may read was accepted")
	}
}

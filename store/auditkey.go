package store

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// AuditKeyFile is the audit key's file, beside the database in the data
// dir but not in it: someone who can rewrite the database but not read
// this file cannot re-hash the chain after an edit.
const AuditKeyFile = "audit.key"

// AuditKey keys the audit chain: entries from sequence number From on are
// hashed with HMAC-SHA256 under Secret. From is kept in the key file, not
// the database, so the database cannot be told that fewer entries are
// keyed. Entries before From (written before the key existed) keep their
// plain SHA-256 chain.
type AuditKey struct {
	Secret []byte
	From   uint64
}

const auditKeyHeader = "approvalbot-audit-key v1"

// ReadAuditKey reads a key file. A file others may read or write is
// refused: the key may have leaked.
func ReadAuditKey(path string) (*AuditKey, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("audit key %s: not a regular file of mode 0600: remove it only if the audit log may be re-keyed from now on", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || lines[0] != auditKeyHeader {
		return nil, fmt.Errorf("audit key %s: not an approvalbot audit key", path)
	}
	hexSecret, ok1 := strings.CutPrefix(lines[1], "secret ")
	from, ok2 := strings.CutPrefix(lines[2], "from ")
	secret, err1 := hex.DecodeString(hexSecret)
	n, err2 := strconv.ParseUint(from, 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || len(secret) != 32 || n == 0 {
		return nil, fmt.Errorf("audit key %s: damaged", path)
	}
	return &AuditKey{Secret: secret, From: n}, nil
}

// EnsureAuditKey returns the key in path, creating it (0600, atomically)
// to cover entries from next on when there is none.
func EnsureAuditKey(path string, next uint64) (*AuditKey, error) {
	if k, err := ReadAuditKey(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("make audit key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".audit.key-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("write audit key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := fmt.Fprintf(tmp, "%s\nsecret %s\nfrom %d\n", auditKeyHeader, hex.EncodeToString(secret), next)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("write audit key: %w", werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return ReadAuditKey(path) // another start made it first
		}
		return nil, fmt.Errorf("create audit key %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return &AuditKey{Secret: secret, From: next}, nil
}

// AuditNext returns the sequence number the next audit entry will get.
func (s *Store) AuditNext(ctx context.Context) (uint64, error) {
	var next uint64 = 1
	err := s.view(ctx, "read audit head", func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil
		}
		if head := meta.Get(metaAuditHead); len(head) >= 8 {
			next = binary.BigEndian.Uint64(head[:8]) + 1
		}
		return nil
	})
	return next, err
}

// UseAuditKey keys the entries appended from now on (and their check).
// Call it before the store is shared.
func (s *Store) UseAuditKey(k *AuditKey) { s.akey = k }

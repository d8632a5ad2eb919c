package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// The audit log is keyed by big-endian sequence numbers starting at 1, so a
// cursor walks it in order. Each entry's Hash is the hex SHA-256 of its
// PrevHash followed by the entry's canonical JSON (encoding/json of
// gate.AuditEntry with Hash empty); the first entry's PrevHash is "". The
// meta bucket keeps the last (seq, hash), so deleting entries from the end is
// detected too.
//
// The chain makes edits evident, it does not make them impossible: without
// an audit key someone who can write the file can rewrite every hash after
// an edit. With one (AuditKey, in a file beside the database) entries from
// the key's From on are HMAC-SHA256 under it, so a rewrite needs the key. New fields of
// gate.AuditEntry must be omitempty, or entries written before them would no
// longer verify.

// ChainError is VerifyAudit's report of the first broken audit entry.
type ChainError struct {
	Seq    uint64 // the first entry that does not verify
	Reason string
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("audit chain broken at seq %d: %s", e.Seq, e.Reason)
}

// auditHash is the hash of e (with Hash ignored) chained to prev: HMAC
// under k's secret from k.From on, else plain SHA-256.
func auditHash(e gate.AuditEntry, k *AuditKey) (string, []byte, error) {
	e.Hash = ""
	body, err := json.Marshal(e)
	if err != nil {
		return "", nil, err
	}
	h := sha256.New()
	if k != nil && e.Seq >= k.From {
		h = hmac.New(sha256.New, k.Secret)
	}
	h.Write([]byte(e.PrevHash))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil)), body, nil
}

// AppendAudit assigns e the next sequence number, chains it to the previous
// entry and stores it. The time is stored in UTC. The entry is returned as
// stored.
func (s *Store) AppendAudit(ctx context.Context, e gate.AuditEntry) (gate.AuditEntry, error) {
	// Batched: the gate audits at-once answers concurrently, and sharing the
	// commit keeps allowed calls from each waiting for their own fsync.
	err := s.batch(ctx, "append audit entry", func(tx *bolt.Tx) error { return appendInTx(tx, &e, s.akey) })
	if err != nil {
		return gate.AuditEntry{}, err
	}
	return e, nil
}

// appendAllInTx appends entries in tx (a state change's own transaction),
// naming approvalID in those that name no approval.
func appendAllInTx(tx *bolt.Tx, approvalID string, entries []gate.AuditEntry, k *AuditKey) error {
	for _, e := range entries {
		if e.ApprovalID == "" {
			e.ApprovalID = approvalID
		}
		if err := appendInTx(tx, &e, k); err != nil {
			return fmt.Errorf("append audit entry %s: %w", e.Event, err)
		}
	}
	return nil
}

// appendInTx is AppendAudit's transaction; it sets e to the entry as stored.
func appendInTx(tx *bolt.Tx, e *gate.AuditEntry, k *AuditKey) error {
	b, err := bucket(tx, bucketAudit)
	if err != nil {
		return err
	}
	meta, err := bucket(tx, bucketMeta)
	if err != nil {
		return err
	}
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	e.Seq, e.PrevHash, e.Hash = seq, "", ""
	e.Time = e.Time.UTC()
	if head := meta.Get(metaAuditHead); head != nil {
		if len(head) < 8 || len(head) > 8+sha256.Size*2 {
			return fmt.Errorf("audit head damaged")
		}
		e.PrevHash = string(head[8:])
	}
	if e.Hash, _, err = auditHash(*e, k); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	if err := sized("audit entry", body, maxValueLen); err != nil {
		return fmt.Errorf("%w: %w", err, gate.ErrInvalid)
	}
	if err := b.Put(u64(seq), body); err != nil {
		return err
	}
	if err := meta.Put(metaAuditHead, append(u64(seq), e.Hash...)); err != nil {
		return err
	}
	// Return what a reader will see (encoding/json replaces invalid UTF-8,
	// for one), not what the caller passed.
	*e = gate.AuditEntry{}
	return json.Unmarshal(body, e)
}

// ListAudit returns entries with Seq > after in order, at most limit (0: all).
func (s *Store) ListAudit(ctx context.Context, after uint64, limit int) ([]gate.AuditEntry, error) {
	if limit < 0 {
		return nil, fmt.Errorf("store: list audit: limit %d: %w", limit, gate.ErrInvalid)
	}
	var out []gate.AuditEntry
	err := s.view(ctx, fmt.Sprintf("list audit after %d", after), func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketAudit)
		if err != nil {
			return err
		}
		if after == ^uint64(0) {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Seek(u64(after + 1)); k != nil; k, v = c.Next() {
			if limit > 0 && len(out) >= limit {
				break
			}
			if len(out)%1024 == 1023 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := sized("audit entry", v, maxValueLen); err != nil {
				return fmt.Errorf("entry %s: %w", short(k), err)
			}
			var e gate.AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode entry %s: %w", short(k), err)
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// VerifyAudit recomputes the whole chain and returns the number of entries,
// or a *ChainError (wrapped) naming the first entry that was changed,
// removed, inserted or moved.
func (s *Store) VerifyAudit(ctx context.Context) (int, error) {
	n := 0
	err := s.view(ctx, "verify audit", func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketAudit)
		if err != nil {
			return err
		}
		meta, err := bucket(tx, bucketMeta)
		if err != nil {
			return err
		}
		var prev string
		want := uint64(1)
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if n%1024 == 1023 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if len(k) != 8 {
				return &ChainError{Seq: want, Reason: "bad key " + short(k)}
			}
			seq := binary.BigEndian.Uint64(k)
			if seq != want {
				return &ChainError{Seq: want, Reason: fmt.Sprintf("entry missing (next stored entry is %d)", seq)}
			}
			if len(v) > maxValueLen {
				return &ChainError{Seq: seq, Reason: fmt.Sprintf("entry of %d bytes (damaged)", len(v))}
			}
			var e gate.AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return &ChainError{Seq: seq, Reason: fmt.Sprintf("undecodable: %v", err)}
			}
			if e.Seq != seq {
				return &ChainError{Seq: seq, Reason: fmt.Sprintf("entry says seq %d (moved)", e.Seq)}
			}
			if e.PrevHash != prev {
				return &ChainError{Seq: seq, Reason: "prev_hash does not match the previous entry's hash"}
			}
			h, _, err := auditHash(e, s.akey)
			if err != nil {
				return &ChainError{Seq: seq, Reason: fmt.Sprintf("cannot encode: %v", err)}
			}
			if h != e.Hash {
				return &ChainError{Seq: seq, Reason: "hash does not match the content (entry changed)"}
			}
			prev = e.Hash
			want++
			n++
		}
		if s.akey != nil && want < s.akey.From {
			// The key file says entries up to From-1 existed when it was
			// made: fewer means some were removed from the end.
			return &ChainError{Seq: want, Reason: fmt.Sprintf("the chain ends at %d, but %d entries existed when the audit key was made (entries removed)", want-1, s.akey.From-1)}
		}
		head := meta.Get(metaAuditHead)
		switch {
		case head == nil && n == 0:
			return nil
		case head == nil:
			return &ChainError{Seq: 1, Reason: "entries present but the chain head is missing"}
		case len(head) < 8 || len(head) > 8+sha256.Size*2:
			return &ChainError{Seq: want, Reason: "chain head damaged"}
		}
		headSeq := binary.BigEndian.Uint64(head[:8])
		last := want - 1
		switch {
		case headSeq > last:
			return &ChainError{Seq: want, Reason: fmt.Sprintf("entries %d to %d missing", want, headSeq)}
		case headSeq < last:
			return &ChainError{Seq: headSeq + 1, Reason: fmt.Sprintf("entries after the last one written (%d) were added", headSeq)}
		case string(head[8:]) != prev:
			return &ChainError{Seq: last, Reason: "does not match the recorded chain head (entry replaced)"}
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	return n, nil
}

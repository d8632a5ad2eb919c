package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// approvalBuckets are the buckets an approval write touches.
type approvalBuckets struct {
	byID, bySeq, pending, byKey *bolt.Bucket
	// byAgent and agentBytes are nil only in a version 1 file opened
	// read-only.
	byAgent, agentBytes *bolt.Bucket
	schema              uint64
}

func openApprovalBuckets(tx *bolt.Tx) (approvalBuckets, error) {
	var ab approvalBuckets
	var err error
	if ab.byID, err = bucket(tx, bucketApprovals); err != nil {
		return ab, err
	}
	if ab.bySeq, err = bucket(tx, bucketApprovalSeq); err != nil {
		return ab, err
	}
	if ab.pending, err = bucket(tx, bucketPending); err != nil {
		return ab, err
	}
	if ab.byKey, err = bucket(tx, bucketIdempotency); err != nil {
		return ab, err
	}
	ab.byAgent, ab.agentBytes = tx.Bucket(bucketByAgent), tx.Bucket(bucketAgentBytes)
	ab.schema = SchemaVersion
	if raw := tx.Bucket(bucketMeta).Get(metaSchema); len(raw) == 8 {
		ab.schema = binary.BigEndian.Uint64(raw)
	}
	return ab, nil
}

// idemKey is the idempotency index key of (agent, key).
func idemKey(agent, key string) []byte { return append(agentKey(agent), key...) }

// getApproval reads the approval with id; ErrNotFound if there is none.
func (ab approvalBuckets) get(rawID []byte) (uint64, *gate.Approval, error) {
	if len(rawID) == 0 {
		return 0, nil, fmt.Errorf("approval id is empty: %w", gate.ErrNotFound)
	}
	if err := sized("approval id", rawID, maxKeyLen); err != nil {
		return 0, nil, err
	}
	id := string(rawID)
	v := ab.byID.Get(rawID)
	if v == nil {
		return 0, nil, fmt.Errorf("approval %q: %w", id, gate.ErrNotFound)
	}
	if err := sized("approval "+id, v, maxValueLen); err != nil {
		return 0, nil, err
	}
	seq, body, err := splitRecord(v)
	if err != nil {
		return 0, nil, fmt.Errorf("approval %q: %w", id, err)
	}
	a := new(gate.Approval)
	if err := json.Unmarshal(body, a); err != nil {
		return 0, nil, fmt.Errorf("decode approval %q: %w", id, err)
	}
	return seq, a, nil
}

// put writes a and keeps the pending index in step with its status.
func (ab approvalBuckets) put(seq uint64, a *gate.Approval) error {
	body, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode approval %q: %w", a.ID, err)
	}
	if err := sized("approval "+a.ID, body, maxValueLen-8); err != nil {
		return fmt.Errorf("%w: %w", err, gate.ErrInvalid)
	}
	if err := ab.byID.Put([]byte(a.ID), record(seq, body)); err != nil {
		return err
	}
	if a.Status == gate.StatusPending {
		return ab.pending.Put(u64(seq), pendingValue(a))
	}
	return ab.pending.Delete(u64(seq))
}

// validApproval rejects what would corrupt the indexes or what no reader
// could make sense of.
func validApproval(a *gate.Approval) error {
	if a.ID == "" {
		return fmt.Errorf("approval without id: %w", gate.ErrInvalid)
	}
	if !a.Status.Valid() {
		return fmt.Errorf("approval %q: status %q: %w", a.ID, a.Status, gate.ErrInvalid)
	}
	return nil
}

// CreateApproval stores a new approval (status "" means pending) and points
// the (agent, idempotency key) index at it. If the index already points at
// an approval prev, gate.Reuse(prev, a) decides in the same transaction:
// attach (nothing stored; prev returned with an error wrapping
// gate.ErrExists), conflict (nothing stored; prev returned with Reuse's
// error, wrapping gate.ErrConflict), or neither (a stored, the index moved
// to it). bbolt runs one writer at a time, so racing submits of one key
// make exactly one approval. An approval without an idempotency key is not
// indexed. An id that is already used is an error wrapping gate.ErrInvalid
// (not ErrExists, which means "attach to this one").
//
// The audit entries are appended in the same transaction when a is stored
// (never on attach or conflict), so the approval and its "pending" entry
// reach the disk together or not at all.
func (s *Store) CreateApproval(ctx context.Context, a *gate.Approval, audit ...gate.AuditEntry) (*gate.Approval, error) {
	if a == nil {
		return nil, fmt.Errorf("store: create approval: nil approval: %w", gate.ErrInvalid)
	}
	c := *a
	if c.Status == "" {
		c.Status = gate.StatusPending
	}
	if err := validApproval(&c); err != nil {
		return nil, fmt.Errorf("store: create approval: %w", err)
	}
	var existing *gate.Approval
	err := s.update(ctx, fmt.Sprintf("create approval %q", c.ID), func(tx *bolt.Tx) error {
		var err error
		existing, err = createInTx(tx, &c)
		if err != nil {
			return err
		}
		return appendAllInTx(tx, c.ID, audit, s.akey)
	})
	if err != nil {
		return existing, err
	}
	return &c, nil
}

// createInTx is CreateApproval's transaction: it returns the approval the
// key already names along with ErrExists (attach) or gate.Reuse's error.
func createInTx(tx *bolt.Tx, c *gate.Approval) (*gate.Approval, error) {
	ab, err := openApprovalBuckets(tx)
	if err != nil {
		return nil, err
	}
	if ab.byID.Get([]byte(c.ID)) != nil {
		return nil, fmt.Errorf("id already used: %w", gate.ErrInvalid)
	}
	var key []byte
	if c.IdempotencyKey != "" {
		key = idemKey(c.Agent, c.IdempotencyKey)
		if id := ab.byKey.Get(key); id != nil {
			_, prev, err := ab.get(id)
			switch {
			case errors.Is(err, gate.ErrNotFound):
				// A dangling index entry: the key is free.
			case err != nil:
				return nil, fmt.Errorf("idempotency key %q: %w", c.IdempotencyKey, err)
			default:
				attach, err := gate.Reuse(prev, c)
				if err != nil {
					return prev, err
				}
				if attach {
					return prev, fmt.Errorf("idempotency key %q names %q: %w", c.IdempotencyKey, prev.ID, gate.ErrExists)
				}
			}
		}
	}
	seq, err := ab.byID.NextSequence()
	if err != nil {
		return nil, err
	}
	if err := ab.put(seq, c); err != nil {
		return nil, err
	}
	if err := ab.bySeq.Put(u64(seq), []byte(c.ID)); err != nil {
		return nil, err
	}
	if err := ab.addAgent(seq, c); err != nil {
		return nil, err
	}
	if key != nil {
		if err := ab.byKey.Put(key, []byte(c.ID)); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// GetApproval returns the approval with id, or an error wrapping
// gate.ErrNotFound.
func (s *Store) GetApproval(ctx context.Context, id string) (*gate.Approval, error) {
	var a *gate.Approval
	err := s.view(ctx, fmt.Sprintf("get approval %q", id), func(tx *bolt.Tx) error {
		ab, err := openApprovalBuckets(tx)
		if err != nil {
			return err
		}
		_, a, err = ab.get([]byte(id))
		return err
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// FindApproval returns the latest approval made under an agent's idempotency
// key, or an error wrapping gate.ErrNotFound.
func (s *Store) FindApproval(ctx context.Context, agent, idempotencyKey string) (*gate.Approval, error) {
	var a *gate.Approval
	err := s.view(ctx, fmt.Sprintf("find approval of agent %q key %q", agent, idempotencyKey), func(tx *bolt.Tx) error {
		ab, err := openApprovalBuckets(tx)
		if err != nil {
			return err
		}
		if idempotencyKey == "" {
			return fmt.Errorf("empty idempotency key: %w", gate.ErrNotFound)
		}
		id := ab.byKey.Get(idemKey(agent, idempotencyKey))
		if id == nil {
			return gate.ErrNotFound
		}
		_, a, err = ab.get(id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// UpdateApproval reads the approval with id, lets fn change it and writes it
// back, all in one transaction, so concurrent updates serialise and fn always
// sees the latest state. If fn returns an error nothing is written and that
// error is returned (wrapped). fn may not change the id, agent or
// idempotency key (the indexes hang on them) nor set an unknown status.
func (s *Store) UpdateApproval(ctx context.Context, id string, fn func(*gate.Approval) error) (*gate.Approval, error) {
	return s.UpdateApprovalAudit(ctx, id, func(a *gate.Approval) (*gate.AuditEntry, error) { return nil, fn(a) })
}

// UpdateApprovalAudit is UpdateApproval for a state change: the audit entry
// fn returns (nil: none; its ApprovalID defaults to id) is appended in the
// same transaction as the changed approval, so neither reaches the disk
// without the other.
func (s *Store) UpdateApprovalAudit(ctx context.Context, id string, fn func(*gate.Approval) (*gate.AuditEntry, error)) (*gate.Approval, error) {
	var out *gate.Approval
	err := s.update(ctx, fmt.Sprintf("update approval %q", id), func(tx *bolt.Tx) error {
		ab, err := openApprovalBuckets(tx)
		if err != nil {
			return err
		}
		seq, a, err := ab.get([]byte(id))
		if err != nil {
			return err
		}
		agent, key := a.Agent, a.IdempotencyKey
		e, err := fn(a)
		if err != nil {
			return err
		}
		if a.ID != id || a.Agent != agent || a.IdempotencyKey != key {
			return fmt.Errorf("id, agent and idempotency key cannot change: %w", gate.ErrInvalid)
		}
		if err := validApproval(a); err != nil {
			return err
		}
		if err := ab.put(seq, a); err != nil {
			return err
		}
		if e != nil {
			if err := appendAllInTx(tx, id, []gate.AuditEntry{*e}, s.akey); err != nil {
				return err
			}
		}
		out = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListApprovals returns approvals in creation order; status "" means all.
// Pending approvals come from their own index, so listing them costs what is
// pending, not every approval ever made.
func (s *Store) ListApprovals(ctx context.Context, status gate.Status) ([]*gate.Approval, error) {
	if status != "" && !status.Valid() {
		return nil, fmt.Errorf("store: list approvals: status %q: %w", status, gate.ErrInvalid)
	}
	var out []*gate.Approval
	err := s.view(ctx, fmt.Sprintf("list approvals %q", status), func(tx *bolt.Tx) error {
		ab, err := openApprovalBuckets(tx)
		if err != nil {
			return err
		}
		index := ab.bySeq
		if status == gate.StatusPending {
			index = ab.pending
		}
		c := index.Cursor()
		n := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if n++; n%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			id := v
			if status == gate.StatusPending {
				ref, err := ab.pendingRef(v)
				if err != nil {
					return fmt.Errorf("index entry %s: %v", short(k), err)
				}
				id = []byte(ref.ID)
			}
			_, a, err := ab.get(id)
			if err != nil {
				// Not ErrNotFound: the list exists, the index is damaged.
				return fmt.Errorf("index entry %s: %v", short(k), err)
			}
			if status == "" || a.Status == status {
				out = append(out, a)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

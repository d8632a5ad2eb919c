package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// maxPageScan bounds the index entries one page looks at, so a filter that
// matches little (an old status, a quiet agent) costs a bounded
// transaction; the page then comes back short, with a cursor to go on.
const maxPageScan = 10000

// pendingValue is a pending index entry: what start-up needs of a pending
// approval, so it never decodes one (deadline unix ns (8), input size
// (8), agentKey(agent), id).
func pendingValue(a *gate.Approval) []byte {
	var dl int64
	if !a.Deadline.IsZero() {
		dl = a.Deadline.UnixNano()
	}
	b := make([]byte, 16, 16+binary.MaxVarintLen64+len(a.Agent)+len(a.ID))
	binary.BigEndian.PutUint64(b, uint64(dl))
	binary.BigEndian.PutUint64(b[8:], uint64(len(a.Input)))
	b = append(b, agentKey(a.Agent)...)
	return append(b, a.ID...)
}

// pendingRef reads a pending index entry (in a version 1 file, the id
// alone: the approval is decoded for the rest).
func (ab approvalBuckets) pendingRef(v []byte) (gate.PendingRef, error) {
	if ab.schema < 2 {
		_, a, err := ab.get(v)
		if err != nil {
			return gate.PendingRef{}, err
		}
		return gate.PendingRef{ID: a.ID, Agent: a.Agent, Deadline: a.Deadline, InputSize: int64(len(a.Input))}, nil
	}
	if len(v) < 17 {
		return gate.PendingRef{}, fmt.Errorf("pending entry too short (%d bytes)", len(v))
	}
	ref := gate.PendingRef{InputSize: int64(binary.BigEndian.Uint64(v[8:]))}
	if dl := int64(binary.BigEndian.Uint64(v)); dl != 0 {
		ref.Deadline = time.Unix(0, dl)
	}
	agent, rest, err := splitAgentKey(v[16:])
	if err != nil || len(rest) == 0 {
		return gate.PendingRef{}, fmt.Errorf("pending entry %s is damaged", short(v))
	}
	ref.Agent, ref.ID = agent, string(rest)
	return ref, nil
}

// splitAgentKey is the inverse of agentKey, returning what follows it.
func splitAgentKey(b []byte) (string, []byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return "", nil, errors.New("bad agent key")
	}
	return string(b[w : w+int(n)]), b[w+int(n):], nil
}

// addAgent indexes a new approval by agent and counts its input bytes.
func (ab approvalBuckets) addAgent(seq uint64, a *gate.Approval) error {
	if ab.byAgent == nil || ab.agentBytes == nil {
		return errors.New("store opened read-only")
	}
	if err := ab.byAgent.Put(append(agentKey(a.Agent), u64(seq)...), []byte(a.ID)); err != nil {
		return err
	}
	return ab.addBytes(a.Agent, int64(len(a.Input)))
}

func (ab approvalBuckets) addBytes(agent string, delta int64) error {
	k := agentKey(agent)
	var n int64
	if v := ab.agentBytes.Get(k); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	if n += delta; n <= 0 {
		return ab.agentBytes.Delete(k)
	}
	return ab.agentBytes.Put(k, u64(uint64(n)))
}

// migrateV2 builds what version 2 adds from the approvals of a version 1
// file: the agent index, the byte counts and the pending entries.
func migrateV2(tx *bolt.Tx) error {
	ab, err := openApprovalBuckets(tx)
	if err != nil {
		return err
	}
	ab.schema = SchemaVersion
	c := ab.byID.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		seq, _, err := splitRecord(v)
		if err != nil {
			return fmt.Errorf("approval %s: %w", short(k), err)
		}
		_, a, err := ab.get(k)
		if err != nil {
			return err
		}
		if err := ab.addAgent(seq, a); err != nil {
			return err
		}
		if a.Status == gate.StatusPending {
			if err := ab.pending.Put(u64(seq), pendingValue(a)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ListApprovalsPage returns one page of approvals in creation order. The
// pending index serves status pending (filtered by agent without decoding
// other approvals), the agent index serves an agent; any other status is
// filtered after decoding, within maxPageScan entries a page.
func (s *Store) ListApprovalsPage(ctx context.Context, q gate.ListQuery) (gate.Page, error) {
	if q.Status != "" && !q.Status.Valid() {
		return gate.Page{}, fmt.Errorf("store: list approvals: status %q: %w", q.Status, gate.ErrInvalid)
	}
	if q.Limit <= 0 {
		return gate.Page{}, fmt.Errorf("store: list approvals: limit %d: %w", q.Limit, gate.ErrInvalid)
	}
	var page gate.Page
	err := s.view(ctx, fmt.Sprintf("list approvals %q of %q", q.Status, q.Agent), func(tx *bolt.Tx) error {
		ab, err := openApprovalBuckets(tx)
		if err != nil {
			return err
		}
		var prefix []byte
		var c *bolt.Cursor
		byAgent := false
		switch {
		case q.Status == gate.StatusPending:
			c = ab.pending.Cursor()
		case q.Agent != "" && ab.byAgent != nil:
			prefix, c, byAgent = agentKey(q.Agent), ab.byAgent.Cursor(), true
		default:
			c = ab.bySeq.Cursor()
		}
		seek := append(append([]byte(nil), prefix...), u64(q.After+1)...)
		if q.After == ^uint64(0) {
			return nil
		}
		size, scanned := 0, 0
		for k, v := c.Seek(seek); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) != len(prefix)+8 {
				return fmt.Errorf("index entry %s is damaged", short(k))
			}
			seq := binary.BigEndian.Uint64(k[len(prefix):])
			if len(page.Approvals) >= q.Limit || (q.MaxBytes > 0 && size >= q.MaxBytes) || scanned >= maxPageScan {
				page.Next = seq - 1 // more to see from here on
				return nil
			}
			if scanned++; scanned%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			id := v
			if q.Status == gate.StatusPending {
				ref, err := ab.pendingRef(v)
				if err != nil {
					return fmt.Errorf("index entry %s: %v", short(k), err)
				}
				if q.Agent != "" && ref.Agent != q.Agent {
					continue
				}
				id = []byte(ref.ID)
			}
			_, a, err := ab.get(id)
			if err != nil {
				return fmt.Errorf("index entry %s: %v", short(k), err)
			}
			if (q.Status != "" && a.Status != q.Status) || (q.Agent != "" && !byAgent && a.Agent != q.Agent) {
				continue
			}
			page.Approvals = append(page.Approvals, a)
			size += len(ab.byID.Get(id))
		}
		return nil
	})
	if err != nil {
		return gate.Page{}, err
	}
	return page, nil
}

// PendingRefs returns every pending approval's id, agent, deadline and
// input size from the pending index alone.
func (s *Store) PendingRefs(ctx context.Context) ([]gate.PendingRef, error) {
	var out []gate.PendingRef
	err := s.view(ctx, "list pending refs", func(tx *bolt.Tx) error {
		ab, err := openApprovalBuckets(tx)
		if err != nil {
			return err
		}
		// No Stats() for a capacity: it walks the whole bucket again.
		c := ab.pending.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			ref, err := ab.pendingRef(v)
			if err != nil {
				return fmt.Errorf("index entry %s: %v", short(k), err)
			}
			out = append(out, ref)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AgentBytes returns the input bytes stored per agent.
func (s *Store) AgentBytes(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	err := s.view(ctx, "read agent bytes", func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAgentBytes)
		if b == nil {
			return nil // a version 1 file, read-only
		}
		return b.ForEach(func(k, v []byte) error {
			agent, rest, err := splitAgentKey(k)
			if err != nil || len(rest) != 0 || len(v) != 8 {
				return fmt.Errorf("agent bytes entry %s is damaged", short(k))
			}
			out[agent] = int64(binary.BigEndian.Uint64(v))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PruneApprovals deletes up to max final approvals decided before before,
// oldest first, in one transaction. It stops at the first approval created
// at or after before (creation order is time order), and looks at no more
// than maxPageScan entries, so the transaction stays short.
func (s *Store) PruneApprovals(ctx context.Context, before time.Time, max int) (int, error) {
	if max <= 0 {
		return 0, nil
	}
	n := 0
	err := s.update(ctx, "prune approvals", func(tx *bolt.Tx) error {
		n = 0
		ab, err := openApprovalBuckets(tx)
		if err != nil {
			return err
		}
		type victim struct {
			seq uint64
			a   *gate.Approval
		}
		var vs []victim
		c := ab.bySeq.Cursor()
		scanned := 0
		for k, id := c.First(); k != nil && len(vs) < max && scanned < maxPageScan; k, id = c.Next() {
			scanned++
			if len(k) != 8 {
				return fmt.Errorf("index entry %s is damaged", short(k))
			}
			_, a, err := ab.get(id)
			if err != nil {
				return fmt.Errorf("index entry %s: %v", short(k), err)
			}
			if !a.CreatedAt.Before(before) {
				break
			}
			at := a.CreatedAt
			if a.DecidedAt != nil {
				at = *a.DecidedAt
			}
			if a.Status.Final() && at.Before(before) {
				vs = append(vs, victim{binary.BigEndian.Uint64(k), a})
			}
		}
		// Deleted after the walk: a bbolt cursor may skip an entry after
		// a delete under it.
		for _, v := range vs {
			a := v.a
			if err := ab.byID.Delete([]byte(a.ID)); err != nil {
				return err
			}
			if err := ab.bySeq.Delete(u64(v.seq)); err != nil {
				return err
			}
			if err := ab.pending.Delete(u64(v.seq)); err != nil {
				return err
			}
			if a.IdempotencyKey != "" {
				key := idemKey(a.Agent, a.IdempotencyKey)
				if bytes.Equal(ab.byKey.Get(key), []byte(a.ID)) {
					if err := ab.byKey.Delete(key); err != nil {
						return err
					}
				}
			}
			if ab.byAgent != nil {
				if err := ab.byAgent.Delete(append(agentKey(a.Agent), u64(v.seq)...)); err != nil {
					return err
				}
				if err := ab.addBytes(a.Agent, -int64(len(a.Input))); err != nil {
					return err
				}
			}
		}
		n = len(vs)
		return nil
	})
	return n, err
}

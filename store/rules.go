package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// AddRule stores r under its id (set by the caller), and appends the audit
// entries in the same transaction. An id already in use is an error
// wrapping gate.ErrExists. Rules list in the order they were added.
func (s *Store) AddRule(ctx context.Context, r gate.AlwaysRule, audit ...gate.AuditEntry) error {
	if r.ID == "" {
		return fmt.Errorf("store: add rule: rule without id: %w", gate.ErrInvalid)
	}
	return s.update(ctx, fmt.Sprintf("add rule %q", r.ID), func(tx *bolt.Tx) error {
		rules, byAgent, bySeq, err := ruleBuckets(tx)
		if err != nil {
			return err
		}
		if rules.Get([]byte(r.ID)) != nil {
			return gate.ErrExists
		}
		body, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		if err := sized("rule", body, maxValueLen-8); err != nil {
			return fmt.Errorf("%w: %w", err, gate.ErrInvalid)
		}
		seq, err := rules.NextSequence()
		if err != nil {
			return err
		}
		if err := rules.Put([]byte(r.ID), record(seq, body)); err != nil {
			return err
		}
		if err := byAgent.Put(append(agentKey(r.Agent), u64(seq)...), []byte(r.ID)); err != nil {
			return err
		}
		if err := bySeq.Put(u64(seq), []byte(r.ID)); err != nil {
			return err
		}
		return appendAllInTx(tx, "", audit, s.akey)
	})
}

// DeleteRule removes the rule with id and returns it, or an error wrapping
// gate.ErrNotFound.
func (s *Store) DeleteRule(ctx context.Context, id string) (gate.AlwaysRule, error) {
	var r gate.AlwaysRule
	err := s.update(ctx, fmt.Sprintf("delete rule %q", id), func(tx *bolt.Tx) error {
		rules, byAgent, bySeq, err := ruleBuckets(tx)
		if err != nil {
			return err
		}
		if id == "" {
			return gate.ErrNotFound
		}
		seq, got, err := getRule(rules, []byte(id))
		if err != nil {
			return err
		}
		r = got
		if err := rules.Delete([]byte(id)); err != nil {
			return err
		}
		if err := byAgent.Delete(append(agentKey(r.Agent), u64(seq)...)); err != nil {
			return err
		}
		return bySeq.Delete(u64(seq))
	})
	if err != nil {
		return gate.AlwaysRule{}, err
	}
	return r, nil
}

// ListRules returns the rules of agent in the order they were added, or of
// every agent for "". Expired rules are included: the gate decides what is
// active (AlwaysRule.Active) and shows the rest in /rules.
func (s *Store) ListRules(ctx context.Context, agent string) ([]gate.AlwaysRule, error) {
	var out []gate.AlwaysRule
	err := s.view(ctx, fmt.Sprintf("list rules of agent %q", agent), func(tx *bolt.Tx) error {
		rules, byAgent, bySeq, err := ruleBuckets(tx)
		if err != nil {
			return err
		}
		var prefix []byte
		index := bySeq
		if agent != "" {
			prefix, index = agentKey(agent), byAgent
		}
		c := index.Cursor()
		for k, id := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, id = c.Next() {
			_, r, err := getRule(rules, id)
			if err != nil {
				return fmt.Errorf("index entry %s: %v", short(k), err)
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetMode stores an agent's mode; "" removes it, so the agent is back to the
// default. An unknown mode is an error wrapping gate.ErrInvalid. The audit
// entries are appended in the same transaction.
func (s *Store) SetMode(ctx context.Context, agent string, m gate.Mode, audit ...gate.AuditEntry) error {
	if m != "" && !m.Valid() {
		return fmt.Errorf("store: set mode of agent %q: mode %q: %w", agent, m, gate.ErrInvalid)
	}
	return s.update(ctx, fmt.Sprintf("set mode of agent %q", agent), func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketModes)
		if err != nil {
			return err
		}
		if m == "" {
			err = b.Delete(agentKey(agent))
		} else {
			err = b.Put(agentKey(agent), []byte(m))
		}
		if err != nil {
			return err
		}
		return appendAllInTx(tx, "", audit, s.akey)
	})
}

// GetMode returns an agent's mode, or "" for an agent without one.
func (s *Store) GetMode(ctx context.Context, agent string) (gate.Mode, error) {
	var m gate.Mode
	err := s.view(ctx, fmt.Sprintf("get mode of agent %q", agent), func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketModes)
		if err != nil {
			return err
		}
		raw := b.Get(agentKey(agent))
		if err := sized("mode", raw, 64); err != nil {
			return err
		}
		m = gate.Mode(raw)
		if m != "" && !m.Valid() {
			return fmt.Errorf("stored mode %q is unknown", m)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return m, nil
}

func ruleBuckets(tx *bolt.Tx) (rules, byAgent, bySeq *bolt.Bucket, err error) {
	if rules, err = bucket(tx, bucketRules); err != nil {
		return
	}
	if byAgent, err = bucket(tx, bucketRulesByAgent); err != nil {
		return
	}
	bySeq, err = bucket(tx, bucketRuleSeq)
	return
}

func getRule(rules *bolt.Bucket, id []byte) (uint64, gate.AlwaysRule, error) {
	var r gate.AlwaysRule
	if err := sized("rule id", id, maxKeyLen); err != nil {
		return 0, r, err
	}
	v := rules.Get(id)
	if err := sized("rule", v, maxValueLen); err != nil {
		return 0, r, err
	}
	if v == nil {
		return 0, r, fmt.Errorf("rule %q: %w", id, gate.ErrNotFound)
	}
	seq, body, err := splitRecord(v)
	if err != nil {
		return 0, r, fmt.Errorf("rule %q: %w", id, err)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, r, fmt.Errorf("decode rule %q: %w", id, err)
	}
	return seq, r, nil
}

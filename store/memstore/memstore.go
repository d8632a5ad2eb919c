// Package memstore is an in-memory gate.Store, held to the same contract
// tests as the bbolt store (store/storetest), for tests that want the real
// gate without a database file. Values are copied in and out through JSON,
// as the bbolt store encodes them, so a caller can never change what is
// stored by keeping a pointer, and what comes back is what a reader of the
// bbolt store would see.
package memstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"approvalbot/gate"
)

// Store is an in-memory gate.Store. It is safe for concurrent use; every
// method runs under one lock, so UpdateApproval and CreateApproval are
// atomic as the bbolt store's transactions are.
type Store struct {
	mu        sync.Mutex
	approvals map[string][]byte // id → JSON
	order     []string          // ids in creation order; a pruned one is "" (the index+1 is its cursor)
	byKey     map[string]string // agent \x00 idempotency key → id
	rules     []gate.AlwaysRule
	modes     map[string]gate.Mode
	denials   map[string]gate.Denial
	audit     []gate.AuditEntry
	values    map[string]string
}

var _ gate.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{approvals: map[string][]byte{}, byKey: map[string]string{}, modes: map[string]gate.Mode{},
		denials: map[string]gate.Denial{}, values: map[string]string{}}
}

// Close does nothing; it is there so tests can treat both stores alike.
func (s *Store) Close() error { return nil }

func idemKey(agent, key string) string { return agent + "\x00" + key }

func decode(raw []byte) *gate.Approval {
	a := new(gate.Approval)
	if err := json.Unmarshal(raw, a); err != nil {
		panic(fmt.Sprintf("memstore: stored approval does not decode: %v", err)) // we encoded it
	}
	return a
}

func valid(a *gate.Approval) error {
	if a.ID == "" {
		return fmt.Errorf("approval without id: %w", gate.ErrInvalid)
	}
	if !a.Status.Valid() {
		return fmt.Errorf("approval %q: status %q: %w", a.ID, a.Status, gate.ErrInvalid)
	}
	return nil
}

// CreateApproval implements gate.ApprovalStore.
func (s *Store) CreateApproval(ctx context.Context, a *gate.Approval, audit ...gate.AuditEntry) (*gate.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if a == nil {
		return nil, fmt.Errorf("memstore: create approval: nil approval: %w", gate.ErrInvalid)
	}
	c := *a
	if c.Status == "" {
		c.Status = gate.StatusPending
	}
	if err := valid(&c); err != nil {
		return nil, fmt.Errorf("memstore: create approval: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.approvals[c.ID]; ok {
		return nil, fmt.Errorf("memstore: create approval %q: id already used: %w", c.ID, gate.ErrInvalid)
	}
	if c.IdempotencyKey != "" {
		if id, ok := s.byKey[idemKey(c.Agent, c.IdempotencyKey)]; ok {
			prev := decode(s.approvals[id])
			attach, err := gate.Reuse(prev, &c)
			if err != nil {
				return prev, err
			}
			if attach {
				return prev, fmt.Errorf("idempotency key %q names %q: %w", c.IdempotencyKey, prev.ID, gate.ErrExists)
			}
		}
	}
	raw, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("memstore: encode approval %q: %w", c.ID, err)
	}
	s.approvals[c.ID] = raw
	s.order = append(s.order, c.ID)
	if c.IdempotencyKey != "" {
		s.byKey[idemKey(c.Agent, c.IdempotencyKey)] = c.ID
	}
	for _, e := range audit {
		if e.ApprovalID == "" {
			e.ApprovalID = c.ID
		}
		s.appendLocked(e)
	}
	return decode(raw), nil
}

// GetApproval implements gate.ApprovalStore.
func (s *Store) GetApproval(ctx context.Context, id string) (*gate.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.approvals[id]
	if !ok {
		return nil, fmt.Errorf("approval %q: %w", id, gate.ErrNotFound)
	}
	return decode(raw), nil
}

// FindApproval implements gate.ApprovalStore.
func (s *Store) FindApproval(ctx context.Context, agent, idempotencyKey string) (*gate.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.byKey[idemKey(agent, idempotencyKey)]
	if !ok || idempotencyKey == "" {
		return nil, gate.ErrNotFound
	}
	return decode(s.approvals[id]), nil
}

// UpdateApproval implements gate.ApprovalStore.
func (s *Store) UpdateApproval(ctx context.Context, id string, fn func(*gate.Approval) error) (*gate.Approval, error) {
	return s.UpdateApprovalAudit(ctx, id, func(a *gate.Approval) (*gate.AuditEntry, error) { return nil, fn(a) })
}

// UpdateApprovalAudit implements gate.ApprovalStore.
func (s *Store) UpdateApprovalAudit(ctx context.Context, id string, fn func(*gate.Approval) (*gate.AuditEntry, error)) (*gate.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.approvals[id]
	if !ok {
		return nil, fmt.Errorf("approval %q: %w", id, gate.ErrNotFound)
	}
	a := decode(raw)
	agent, key := a.Agent, a.IdempotencyKey
	e, err := fn(a)
	if err != nil {
		return nil, err
	}
	if a.ID != id || a.Agent != agent || a.IdempotencyKey != key {
		return nil, fmt.Errorf("id, agent and idempotency key cannot change: %w", gate.ErrInvalid)
	}
	if err := valid(a); err != nil {
		return nil, err
	}
	raw, err = json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("memstore: encode approval %q: %w", id, err)
	}
	s.approvals[id] = raw
	if e != nil {
		s.appendLocked(*e)
	}
	return decode(raw), nil
}

// ListApprovals implements gate.ApprovalStore.
func (s *Store) ListApprovals(ctx context.Context, status gate.Status) ([]*gate.Approval, error) {
	if status != "" && !status.Valid() {
		return nil, fmt.Errorf("memstore: list approvals: status %q: %w", status, gate.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*gate.Approval
	for _, id := range s.order {
		if id == "" {
			continue
		}
		if a := decode(s.approvals[id]); status == "" || a.Status == status {
			out = append(out, a)
		}
	}
	return out, nil
}

// ListApprovalsPage implements gate.ApprovalStore.
func (s *Store) ListApprovalsPage(ctx context.Context, q gate.ListQuery) (gate.Page, error) {
	if q.Status != "" && !q.Status.Valid() {
		return gate.Page{}, fmt.Errorf("memstore: list approvals: status %q: %w", q.Status, gate.ErrInvalid)
	}
	if q.Limit <= 0 {
		return gate.Page{}, fmt.Errorf("memstore: list approvals: limit %d: %w", q.Limit, gate.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return gate.Page{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var page gate.Page
	size := 0
	for i := q.After; i < uint64(len(s.order)); i++ {
		id := s.order[i]
		if id == "" {
			continue
		}
		if len(page.Approvals) >= q.Limit || (q.MaxBytes > 0 && size >= q.MaxBytes) {
			page.Next = i
			break
		}
		a := decode(s.approvals[id])
		if (q.Status == "" || a.Status == q.Status) && (q.Agent == "" || a.Agent == q.Agent) {
			page.Approvals = append(page.Approvals, a)
			size += len(s.approvals[id])
		}
	}
	return page, nil
}

// PendingRefs implements gate.ApprovalStore.
func (s *Store) PendingRefs(ctx context.Context) ([]gate.PendingRef, error) {
	as, err := s.ListApprovals(ctx, gate.StatusPending)
	if err != nil {
		return nil, err
	}
	out := make([]gate.PendingRef, 0, len(as))
	for _, a := range as {
		out = append(out, gate.PendingRef{ID: a.ID, Agent: a.Agent, Deadline: a.Deadline, InputSize: int64(len(a.Input))})
	}
	return out, nil
}

// AgentBytes implements gate.ApprovalStore.
func (s *Store) AgentBytes(ctx context.Context) (map[string]int64, error) {
	as, err := s.ListApprovals(ctx, "")
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, a := range as {
		if len(a.Input) > 0 {
			out[a.Agent] += int64(len(a.Input))
		}
	}
	return out, nil
}

// PruneApprovals implements gate.ApprovalStore.
func (s *Store) PruneApprovals(ctx context.Context, before time.Time, max int) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i, id := range s.order {
		if id == "" {
			continue
		}
		a := decode(s.approvals[id])
		if n >= max || !a.CreatedAt.Before(before) {
			break
		}
		at := a.CreatedAt
		if a.DecidedAt != nil {
			at = *a.DecidedAt
		}
		if !a.Status.Final() || !at.Before(before) {
			continue
		}
		delete(s.approvals, id)
		s.order[i] = ""
		if k := idemKey(a.Agent, a.IdempotencyKey); a.IdempotencyKey != "" && s.byKey[k] == id {
			delete(s.byKey, k)
		}
		n++
	}
	return n, nil
}

// AddRule implements gate.RuleStore.
func (s *Store) AddRule(ctx context.Context, r gate.AlwaysRule, audit ...gate.AuditEntry) error {
	if r.ID == "" {
		return fmt.Errorf("memstore: add rule: rule without id: %w", gate.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, have := range s.rules {
		if have.ID == r.ID {
			return gate.ErrExists
		}
	}
	s.rules = append(s.rules, roundTrip(r))
	for _, e := range audit {
		s.appendLocked(e)
	}
	return nil
}

// DeleteRule implements gate.RuleStore.
func (s *Store) DeleteRule(ctx context.Context, id string) (gate.AlwaysRule, error) {
	if err := ctx.Err(); err != nil {
		return gate.AlwaysRule{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.rules {
		if r.ID == id && id != "" {
			s.rules = append(s.rules[:i:i], s.rules[i+1:]...)
			return r, nil
		}
	}
	return gate.AlwaysRule{}, fmt.Errorf("rule %q: %w", id, gate.ErrNotFound)
}

// ListRules implements gate.RuleStore.
func (s *Store) ListRules(ctx context.Context, agent string) ([]gate.AlwaysRule, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []gate.AlwaysRule
	for _, r := range s.rules {
		if agent == "" || r.Agent == agent {
			out = append(out, r)
		}
	}
	return out, nil
}

// SetMode implements gate.RuleStore; "" removes the agent's mode.
func (s *Store) SetMode(ctx context.Context, agent string, m gate.Mode, audit ...gate.AuditEntry) error {
	if m != "" && !m.Valid() {
		return fmt.Errorf("memstore: set mode of agent %q: mode %q: %w", agent, m, gate.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m == "" {
		delete(s.modes, agent)
	} else {
		s.modes[agent] = m
	}
	for _, e := range audit {
		s.appendLocked(e)
	}
	return nil
}

// GetMode implements gate.RuleStore.
func (s *Store) GetMode(ctx context.Context, agent string) (gate.Mode, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modes[agent], nil
}

// RememberDenial implements gate.DenialStore.
func (s *Store) RememberDenial(ctx context.Context, d gate.Denial) error {
	if d.Key == "" {
		return fmt.Errorf("memstore: remember denial: empty key: %w", gate.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denials[d.Key] = roundTrip(d)
	return nil
}

// RecentDenial implements gate.DenialStore.
func (s *Store) RecentDenial(ctx context.Context, key string, now time.Time) (gate.Denial, error) {
	if err := ctx.Err(); err != nil {
		return gate.Denial{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.denials[key]
	if !ok || key == "" {
		return gate.Denial{}, gate.ErrNotFound
	}
	if !now.Before(d.Until) {
		return gate.Denial{}, fmt.Errorf("expired at %s: %w", d.Until.Format(time.RFC3339), gate.ErrNotFound)
	}
	return d, nil
}

// auditHash is the hash of e (Hash ignored) chained to its PrevHash.
func auditHash(e gate.AuditEntry) string {
	e.Hash = ""
	body, _ := json.Marshal(e) // an AuditEntry always encodes
	h := sha256.New()
	h.Write([]byte(e.PrevHash))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// AppendAudit implements gate.AuditLog.
func (s *Store) AppendAudit(ctx context.Context, e gate.AuditEntry) (gate.AuditEntry, error) {
	if err := ctx.Err(); err != nil {
		return gate.AuditEntry{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(e), nil
}

func (s *Store) appendLocked(e gate.AuditEntry) gate.AuditEntry {
	e.Seq, e.PrevHash, e.Hash = uint64(len(s.audit))+1, "", ""
	e.Time = e.Time.UTC()
	if n := len(s.audit); n > 0 {
		e.PrevHash = s.audit[n-1].Hash
	}
	e = roundTrip(e)
	e.Hash = auditHash(e)
	s.audit = append(s.audit, e)
	return e
}

// ListAudit implements gate.AuditLog.
func (s *Store) ListAudit(ctx context.Context, after uint64, limit int) ([]gate.AuditEntry, error) {
	if limit < 0 {
		return nil, fmt.Errorf("memstore: list audit: negative limit: %w", gate.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []gate.AuditEntry
	for _, e := range s.audit {
		if e.Seq > after && (limit == 0 || len(out) < limit) {
			out = append(out, e)
		}
	}
	return out, nil
}

// VerifyAudit implements gate.AuditLog.
func (s *Store) VerifyAudit(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := ""
	for i, e := range s.audit {
		if e.PrevHash != prev || auditHash(e) != e.Hash || e.Seq != uint64(i)+1 {
			return i, fmt.Errorf("audit chain broken at seq %d", e.Seq)
		}
		prev = e.Hash
	}
	return len(s.audit), nil
}

// GetValue implements gate.ValueStore.
func (s *Store) GetValue(ctx context.Context, key string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[key]
	if !ok {
		return "", fmt.Errorf("value %q: %w", key, gate.ErrNotFound)
	}
	return v, nil
}

// PutValue implements gate.ValueStore; "" deletes the value.
func (s *Store) PutValue(ctx context.Context, key, value string) error {
	if key == "" {
		return fmt.Errorf("memstore: put value: empty key: %w", gate.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if value == "" {
		delete(s.values, key)
	} else {
		s.values[key] = value
	}
	return nil
}

// roundTrip returns v as a reader of the bbolt store would get it back.
func roundTrip[T any](v T) T {
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out T
	if json.Unmarshal(raw, &out) != nil {
		return v
	}
	return out
}

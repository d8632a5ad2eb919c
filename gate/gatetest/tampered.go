package gatetest

import (
	"context"
	"errors"
	"sync/atomic"

	"approvalbot/store/memstore"
)

// TamperableStore is the in-memory store with an audit log that a test can
// mark as tampered with: VerifyAudit then fails, as the real check fails on
// a log edited behind the store's back. The stores' own chain checks are
// tested in store/; this is for tests of what the API and the CLI make of
// a broken chain, through the real gate.
type TamperableStore struct {
	*memstore.Store
	broken atomic.Pointer[string]
}

// NewTamperableStore returns an empty store whose audit log verifies until
// Tamper is called.
func NewTamperableStore() *TamperableStore {
	return &TamperableStore{Store: memstore.New()}
}

// Tamper makes VerifyAudit fail with msg (naming the broken entry, as the
// real check does).
func (s *TamperableStore) Tamper(msg string) { s.broken.Store(&msg) }

// VerifyAudit checks the chain, and fails once Tamper was called.
func (s *TamperableStore) VerifyAudit(ctx context.Context) (int, error) {
	n, err := s.Store.VerifyAudit(ctx)
	if msg := s.broken.Load(); msg != nil && err == nil {
		return n, errors.New(*msg)
	}
	return n, err
}

package store

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// GetValue returns the value of key, or an error wrapping gate.ErrNotFound.
func (s *Store) GetValue(ctx context.Context, key string) (string, error) {
	var v string
	err := s.view(ctx, fmt.Sprintf("get value %q", key), func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketValues)
		if err != nil {
			return err
		}
		if key == "" {
			return gate.ErrNotFound
		}
		raw := b.Get([]byte(key))
		if raw == nil {
			return gate.ErrNotFound
		}
		if err := sized("value", raw, maxValueLen); err != nil {
			return err
		}
		v = string(raw) // copies: raw is only valid inside the transaction
		return nil
	})
	if err != nil {
		return "", err
	}
	return v, nil
}

// PutValue stores value under key; "" deletes it. An empty key is an error
// wrapping gate.ErrInvalid.
func (s *Store) PutValue(ctx context.Context, key, value string) error {
	if key == "" {
		return fmt.Errorf("store: put value: empty key: %w", gate.ErrInvalid)
	}
	if len(value) > maxValueLen {
		return fmt.Errorf("store: put value %q: %d bytes, over the %d-byte limit: %w", key, len(value), maxValueLen, gate.ErrInvalid)
	}
	return s.update(ctx, fmt.Sprintf("put value %q", key), func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketValues)
		if err != nil {
			return err
		}
		if value == "" {
			return b.Delete([]byte(key))
		}
		return b.Put([]byte(key), []byte(value))
	})
}

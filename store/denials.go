package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// RememberDenial stores d, replacing any earlier denial with the same key.
func (s *Store) RememberDenial(ctx context.Context, d gate.Denial) error {
	if d.Key == "" {
		return fmt.Errorf("store: remember denial: empty key: %w", gate.ErrInvalid)
	}
	body, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("store: remember denial %q: encode: %w", d.Key, err)
	}
	if err := sized("denial", body, maxValueLen); err != nil {
		return fmt.Errorf("store: remember denial %q: %w: %w", d.Key, err, gate.ErrInvalid)
	}
	return s.update(ctx, fmt.Sprintf("remember denial %q", d.Key), func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketDenials)
		if err != nil {
			return err
		}
		return b.Put([]byte(d.Key), body)
	})
}

// RecentDenial returns the denial with key if it is still valid at now (now
// is before its Until), or an error wrapping gate.ErrNotFound.
func (s *Store) RecentDenial(ctx context.Context, key string, now time.Time) (gate.Denial, error) {
	var d gate.Denial
	err := s.view(ctx, fmt.Sprintf("recent denial %q", key), func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketDenials)
		if err != nil {
			return err
		}
		if key == "" {
			return gate.ErrNotFound
		}
		v := b.Get([]byte(key))
		if v == nil {
			return gate.ErrNotFound
		}
		if err := sized("denial", v, maxValueLen); err != nil {
			return err
		}
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		if !now.Before(d.Until) {
			return fmt.Errorf("expired at %s: %w", d.Until.Format(time.RFC3339), gate.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return gate.Denial{}, err
	}
	return d, nil
}

// PruneDenials deletes the denials that expired at or before now and returns
// how many it deleted. Expired denials are never returned anyway; pruning
// only keeps the file small.
func (s *Store) PruneDenials(ctx context.Context, now time.Time) (int, error) {
	n := 0
	err := s.update(ctx, "prune denials", func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketDenials)
		if err != nil {
			return err
		}
		// Collect first: deleting while a cursor walks skips keys.
		var expired [][]byte
		err = b.ForEach(func(k, v []byte) error {
			var d gate.Denial
			// An undecodable denial can never be returned: prune it too.
			if len(k) > maxKeyLen {
				return sized("denial key", k, maxKeyLen)
			}
			if len(v) > maxValueLen || json.Unmarshal(v, &d) != nil || !now.Before(d.Until) {
				expired = append(expired, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range expired {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(expired)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

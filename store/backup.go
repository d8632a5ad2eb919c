package store

import (
	"context"
	"io"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the whole database file to w, from
// one read transaction, while writers go on.
func (s *Store) Backup(ctx context.Context, w io.Writer) (int64, error) {
	var n int64
	err := s.view(ctx, "back up", func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// Package store is the bbolt implementation of gate.Store: approvals with
// their idempotency and pending indexes, Always rules and modes, denial
// memory, small frontend values and the hash-chained audit log, all in one
// file.
//
// Every write is one short read-write transaction committed with fsync before
// the method returns, so a caller may tell others about what it wrote (a
// pending approval is on disk before any chat message is sent).
package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"approvalbot/gate"
)

// SchemaVersion is the layout version this package writes. A file with a
// higher version was written by a newer approvalbot and is refused, since
// this code cannot know what the newer layout means.
//
// Version 2 added the per-agent index, the per-agent byte counts and
// pending index values that carry what start-up needs (see pendingValue);
// a version 1 file is upgraded on its first writable open.
const SchemaVersion uint64 = 2

// ErrEmptyFile is Open's error for a store file that exists with zero bytes
// (unless Options.InitEmpty): its approvals, rules and audit log are gone,
// and starting on an empty store would hide that.
var ErrEmptyFile = errors.New("the file is empty (zero bytes): its approvals, rules and audit log are gone; restore it from a backup, or set APPROVALBOT_INIT_EMPTY_STORE=true to start a new store in it")

// DefaultLockTimeout is how long Open waits for the file lock held by another
// process before giving up. Long enough to ride out a restart of the previous
// daemon, short enough that a second daemon fails fast instead of hanging.
const DefaultLockTimeout = time.Second

// Bucket names. One bucket per concern; indexes sit beside the data they index.
var (
	bucketMeta         = []byte("meta")
	bucketApprovals    = []byte("approvals")          // id -> seq(8) || JSON approval
	bucketApprovalSeq  = []byte("approvals_by_seq")   // seq(8) -> id: creation order
	bucketPending      = []byte("approvals_pending")  // seq(8) -> pendingValue: pending only, creation order
	bucketByAgent      = []byte("approvals_by_agent") // agentKey(agent) || seq(8) -> id
	bucketAgentBytes   = []byte("agent_bytes")        // agentKey(agent) -> input bytes stored (uint64)
	bucketIdempotency  = []byte("approvals_by_key")   // agentKey(agent) || key -> id
	bucketRules        = []byte("rules")              // id -> seq(8) || JSON rule
	bucketRulesByAgent = []byte("rules_by_agent")     // agentKey(agent) || seq(8) -> id
	bucketRuleSeq      = []byte("rules_by_seq")       // seq(8) -> id: creation order
	bucketModes        = []byte("modes")              // agentKey(agent) -> mode
	bucketDenials      = []byte("denials")            // key -> JSON denial
	bucketValues       = []byte("values")             // key -> value
	bucketAudit        = []byte("audit")              // seq(8) -> JSON entry

	allBuckets = [][]byte{
		bucketMeta, bucketApprovals, bucketApprovalSeq, bucketPending, bucketIdempotency,
		bucketRules, bucketRulesByAgent, bucketRuleSeq, bucketModes, bucketDenials,
		bucketValues, bucketAudit, bucketByAgent, bucketAgentBytes,
	}
)

// Keys in the meta bucket.
var (
	metaSchema    = []byte("schema_version") // uint64 big-endian
	metaAuditHead = []byte("audit_head")     // seq(8) || hex hash of the last audit entry
)

// Options tune Open.
type Options struct {
	// LockTimeout is how long to wait for another process's lock on the
	// file. Zero means DefaultLockTimeout; a negative value tries once.
	LockTimeout time.Duration
	// ReadOnly opens the file without taking the write lock (shared with
	// other readers), for offline inspection such as `audit --verify`.
	// Writes then fail. The file must already exist.
	ReadOnly bool
	// InitEmpty lets Open make a new store in a file that exists with zero
	// bytes. Without it such a file is refused: a store that lost its
	// content must not come back as an empty one without anyone noticing.
	InitEmpty bool
	// SkipCheck skips the structural check of the file on open (a read of
	// every page in use; see checkFile). Only for benchmarks and tools that
	// check otherwise: without it a damaged file can crash the process.
	SkipCheck bool
}

// Store is a bbolt-backed gate.Store. It is safe for concurrent use; bbolt
// serialises writers, so read-modify-write methods need no extra locking.
type Store struct {
	db       *bolt.DB
	path     string
	readOnly bool
	akey     *AuditKey // nil: the audit chain is plain SHA-256
	schema   uint64    // the file's layout version (below SchemaVersion only when read-only)
	closeMu  sync.Once
	closeErr error
}

var _ gate.Store = (*Store)(nil)

// Open opens (creating if needed, with its parent directory) the store file at
// path. It fails with a clear error if another process holds the file, if
// the file is not an approvalbot bbolt database or is damaged, and with an
// error wrapping gate.ErrStoreVersion if a newer version wrote it.
func Open(path string, opts Options) (s *Store, err error) {
	timeout := opts.LockTimeout
	switch {
	case timeout == 0:
		timeout = DefaultLockTimeout
	case timeout < 0:
		timeout = time.Nanosecond // bbolt treats 0 as "wait forever"
	}
	if !opts.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("open store %s: create directory: %w", path, err)
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() == 0 && !opts.InitEmpty {
		return nil, fmt.Errorf("open store %s: %w", path, ErrEmptyFile)
	}

	// bbolt can panic (or fault on the mapping) while reading a damaged file,
	// after it has opened and locked it. Keep the file so a recovered panic
	// can close it and release the lock.
	var file *os.File
	bopts := &bolt.Options{
		Timeout:  timeout,
		ReadOnly: opts.ReadOnly,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			if err == nil {
				file = f
			}
			return f, err
		},
	}
	var db *bolt.DB
	err = guard(func() error {
		var err error
		db, err = bolt.Open(path, 0o600, bopts)
		return err
	})
	if err != nil {
		var pe *panicError
		if errors.As(err, &pe) && file != nil {
			_ = file.Close()
		}
		return nil, openError(path, err)
	}
	// Audit appends are batched; a short delay keeps a lone writer's
	// latency low while concurrent ones still share a commit.
	db.MaxBatchDelay = auditBatchDelay
	if !opts.SkipCheck {
		// Checked under bbolt's lock, so no other writer changes the file
		// under the reads.
		if err := guard(func() error { return checkFile(path) }); err != nil {
			_ = guard(db.Close)
			return nil, fmt.Errorf("open store %s: file is damaged: %w", path, err)
		}
	}
	s = &Store{db: db, path: path, readOnly: opts.ReadOnly}
	if err := s.init(); err != nil {
		_ = guard(db.Close)
		return nil, err
	}
	return s, nil
}

// openError turns bbolt's open errors into messages that name the file and
// say what is wrong with it.
func openError(path string, err error) error {
	var pe *panicError
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return fmt.Errorf("store %s is locked by another approvalbot process: %w", path, err)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrChecksum),
		errors.Is(err, bolterrors.ErrVersionMismatch), errors.Is(err, bolterrors.ErrInvalidMapping),
		errors.As(err, &pe):
		return fmt.Errorf("open store %s: not a bbolt database or damaged: %w", path, err)
	default:
		return fmt.Errorf("open store %s: %w", path, err)
	}
}

// init checks the schema version and, for a writable store, creates the
// buckets of a new file.
func (s *Store) init() error {
	check := func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			if s.readOnly {
				return fmt.Errorf("not an approvalbot store (no %s bucket)", bucketMeta)
			}
			// A brand-new file has no buckets at all; anything else is some
			// other program's database, which we must not scribble on.
			if err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
				return fmt.Errorf("not an approvalbot store (has bucket %s but no %s bucket)", short(name), bucketMeta)
			}); err != nil {
				return err
			}
			m, err := tx.CreateBucket(bucketMeta)
			if err != nil {
				return err
			}
			if err := m.Put(metaSchema, u64(SchemaVersion)); err != nil {
				return err
			}
			meta = m
		}
		raw := meta.Get(metaSchema)
		if len(raw) != 8 {
			return fmt.Errorf("not an approvalbot store (bad schema version %s)", short(raw))
		}
		if v := binary.BigEndian.Uint64(raw); v > SchemaVersion {
			return fmt.Errorf("%w: schema version %d, this build knows up to %d", gate.ErrStoreVersion, v, SchemaVersion)
		}
		v := binary.BigEndian.Uint64(raw)
		s.schema = v
		for _, name := range allBuckets {
			if tx.Bucket(name) != nil {
				continue
			}
			if s.readOnly {
				if v < 2 && (bytes.Equal(name, bucketByAgent) || bytes.Equal(name, bucketAgentBytes)) {
					continue // a version 1 file, read as it is
				}
				return fmt.Errorf("not an approvalbot store (no %s bucket)", name)
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		if v < SchemaVersion && !s.readOnly {
			// Migrations run here, inside this transaction: all or nothing.
			if err := migrateV2(tx); err != nil {
				return fmt.Errorf("upgrade the store to version 2: %w", err)
			}
			s.schema = SchemaVersion
			return meta.Put(metaSchema, u64(SchemaVersion))
		}
		return nil
	}
	var err error
	if s.readOnly {
		err = guard(func() error { return s.db.View(check) })
	} else {
		err = guard(func() error { return s.db.Update(check) })
	}
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	return nil
}

// Path returns the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Close releases the file and its lock. Calling it again returns the first
// result.
func (s *Store) Close() error {
	s.closeMu.Do(func() {
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("close store %s: %w", s.path, err)
		}
	})
	return s.closeErr
}

// update runs fn in one read-write transaction, committed with fsync before
// it returns. what names the operation for the error.
func (s *Store) update(ctx context.Context, what string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if err := guard(func() error { return s.db.Update(fn) }); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return nil
}

// auditBatchDelay is how long bbolt waits to gather concurrent audit
// appends into one commit (its default is 10ms).
const auditBatchDelay = time.Millisecond

// batch runs fn in a read-write transaction that bbolt may share with other
// concurrent batch calls (one fsync for all: group commit). fn may run more
// than once, so it must only depend on the transaction.
func (s *Store) batch(ctx context.Context, what string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if err := guard(func() error { return s.db.Batch(fn) }); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return nil
}

// view runs fn in one read-only transaction.
func (s *Store) view(ctx context.Context, what string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if err := guard(func() error { return s.db.View(fn) }); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return nil
}

// panicError is a panic (or a memory fault on the mapped file) inside bbolt,
// which means the file is damaged.
type panicError struct{ value any }

func (e *panicError) Error() string {
	return fmt.Sprintf("database file is damaged (bbolt panicked: %v)", e.value)
}

// guard runs fn and turns a panic into an error. bbolt panics on some damaged
// pages, and a page number pointing outside the file faults on the memory
// mapping; SetPanicOnFault makes that fault a recoverable panic for this
// goroutine (it is meant for exactly this: programs that mmap files). bbolt's
// Update and View roll back on a panic, so the locks are released.
func guard(fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			err = &panicError{value: r}
		}
	}()
	return fn()
}

// u64 encodes n big-endian, so byte order is numeric order in bbolt.
func u64(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}

// agentKey encodes an agent name as a non-empty key prefix: its length, then
// the name, so "a"+"bc" and "ab"+"c" never collide and "" is a valid agent.
func agentKey(agent string) []byte {
	b := binary.AppendUvarint(make([]byte, 0, len(agent)+binary.MaxVarintLen64), uint64(len(agent)))
	return append(b, agent...)
}

// record encodes a value stored with its sequence number in front, so the
// ordered indexes that hold the sequence can be maintained on update and
// delete.
func record(seq uint64, body []byte) []byte {
	b := make([]byte, 8, 8+len(body))
	binary.BigEndian.PutUint64(b, seq)
	return append(b, body...)
}

// splitRecord is the inverse of record.
func splitRecord(v []byte) (uint64, []byte, error) {
	if len(v) < 8 {
		return 0, nil, fmt.Errorf("record too short (%d bytes)", len(v))
	}
	return binary.BigEndian.Uint64(v[:8]), v[8:], nil
}

// bucket returns a bucket that Open guarantees exists; a missing one means
// the file was damaged or edited.
func bucket(tx *bolt.Tx, name []byte) (*bolt.Bucket, error) {
	b := tx.Bucket(name)
	if b == nil {
		return nil, fmt.Errorf("bucket %s missing (store damaged)", name)
	}
	return b, nil
}

// Size limits on what is read back. A damaged page can claim a key or value
// of gigabytes; copying or quoting one would exhaust memory, so anything over
// these limits is reported as damage instead. Writes respect the same limits.
const (
	maxKeyLen   = bolt.MaxKeySize // ids and keys: bbolt cannot store longer keys anyway
	maxValueLen = 64 << 20        // one approval, rule, denial, value or audit entry
)

// sized returns an error if v is longer than limit.
func sized(what string, v []byte, limit int) error {
	if len(v) > limit {
		return fmt.Errorf("%s is %d bytes, over the %d-byte limit (store damaged?)", what, len(v), limit)
	}
	return nil
}

// short renders raw bytes from the file for an error message, bounded.
func short(b []byte) string {
	const n = 32
	if len(b) > n {
		return fmt.Sprintf("%x...(%d bytes)", b[:n], len(b))
	}
	return fmt.Sprintf("%x", b)
}

// metaProbe is the meta key ProbeWrite rewrites.
var metaProbe = []byte("write_probe")

// ProbeWrite commits one small write (with fsync), to tell whether the
// store can be written at all: a full disk, a file system turned read-only
// or a file that went away fail it.
func (s *Store) ProbeWrite(ctx context.Context) error {
	return s.update(ctx, "write probe", func(tx *bolt.Tx) error {
		meta, err := bucket(tx, bucketMeta)
		if err != nil {
			return err
		}
		return meta.Put(metaProbe, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
	})
}

package gate

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for Config fields left zero.
const (
	DefaultTimeout    = 10 * time.Minute
	DefaultDenyMemory = 5 * time.Minute
	// DefaultMaxPending is the pending approvals one agent may have.
	DefaultMaxPending = 1000
	// DefaultMaxStoredBytes is the tool input one agent may have stored
	// (pending and decided approvals, until retention prunes them).
	DefaultMaxStoredBytes = 256 << 20
	// DefaultRetention is how long decided approvals are kept.
	DefaultRetention = 90 * 24 * time.Hour
)

// Limits on what a call may carry, so a client cannot bloat the store.
const (
	maxAgentLen  = 128
	maxToolLen   = 256
	maxIDLen     = 256
	maxCwdLen    = 4096
	maxInputLen  = 512 << 10
	maxReasonLen = 2000
)

// Config holds the gate's lifecycle settings.
type Config struct {
	// Timeout is how long an approval waits for a person (default 10m).
	Timeout time.Duration
	// DenyMemory is how long a person's denial of an exact call is
	// remembered and repeated without prompting (default 5m; negative disables).
	DenyMemory time.Duration
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
	// MaxPending caps one agent's pending approvals; Submit answers
	// ErrTooMany beyond it (default DefaultMaxPending; negative: no cap).
	MaxPending int
	// MaxStoredBytes caps one agent's stored tool input, over every
	// approval kept (default DefaultMaxStoredBytes; negative: no cap).
	MaxStoredBytes int64
	// Retention is how long a decided approval is kept before the
	// background pruning removes it; the audit log is kept whole
	// (default DefaultRetention; negative: keep forever).
	Retention time.Duration
}

// Decision is a person's answer to a pending approval.
type Decision struct {
	Approve   bool       `json:"approve"`
	Always    bool       `json:"always,omitempty"`     // approve and save the Always pattern(s)
	Scope     Scope      `json:"scope,omitempty"`      // for Always; default ScopeAgent
	ExpiresAt *time.Time `json:"expires_at,omitempty"` // for Always; nil: never
	Stop      bool       `json:"stop,omitempty"`       // deny and ask the agent to stop its turn
	Reason    string     `json:"reason,omitempty"`
	By        string     `json:"by"`               // who decided (display name or id)
	Via       string     `json:"via"`              // which surface: telegram, slack, cli, api, watch
	Digest    string     `json:"digest,omitempty"` // if set, must equal the approval's digest (a prefix of at least 8 hex digits is accepted)
}

// Event types sent to subscribers.
const (
	EventApprovalRequired = "approval_required"
	EventApprovalResolved = "approval_resolved"
)

// Event is something that happened to an approval.
type Event struct {
	Type     string    `json:"type"`
	Approval *Approval `json:"approval"`
}

// Health is the gate's state for /healthz.
type Health struct {
	OK         bool   `json:"ok"`
	RulesError string `json:"rules_error,omitempty"` // the last rules reload failed; the last good rules are in use
	StoreError string `json:"store_error,omitempty"` // the store cannot be written (disk full, read-only, gone)
	Pending    int    `json:"pending"`
}

// Gate runs the approval lifecycle. It is safe for concurrent use.
type Gate struct {
	cfg    Config
	store  Store
	logger *slog.Logger

	policy    atomic.Pointer[Policy]
	rulesErr  atomic.Pointer[string]
	probeMu   sync.Mutex // one write probe at a time; guards probedAt, probeErr
	probedAt  time.Time
	probeErr  string
	notifiers []*notifierQueue

	mu      sync.Mutex
	closed  bool
	started bool
	waiters map[string]chan struct{} // closed when the approval becomes final
	timers  map[string]*time.Timer
	// creating holds approvals stored but not yet announced by Submit;
	// the value is the final state a decision reached in between (else nil).
	creating map[string]*Approval
	pending  int
	usage    map[string]*agentUsage // per agent: pending count, stored bytes
	always   map[string]*AlwaysSet  // per agent, compiled from the store
	modes    map[string]Mode
	subs     map[*subscriber]struct{}
	// replays admits one replay page read at a time: a page is CPU-bound
	// decoding, and ten new subscribers at once must not fill every core
	// while submissions wait (a goroutine may run 10 ms before it yields).
	replays chan struct{}
	done    chan struct{}
}

// New returns a gate on store with the compiled policy p.
func New(cfg Config, p *Policy, store Store, logger *slog.Logger) *Gate {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.DenyMemory == 0 {
		cfg.DenyMemory = DefaultDenyMemory
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxPending == 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.MaxStoredBytes == 0 {
		cfg.MaxStoredBytes = DefaultMaxStoredBytes
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	g := &Gate{
		cfg:      cfg,
		store:    store,
		logger:   logger,
		waiters:  make(map[string]chan struct{}),
		creating: make(map[string]*Approval),
		timers:   make(map[string]*time.Timer),
		usage:    make(map[string]*agentUsage),
		always:   make(map[string]*AlwaysSet),
		modes:    make(map[string]Mode),
		subs:     make(map[*subscriber]struct{}),
		replays:  make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	g.policy.Store(p)
	return g
}

// SetPolicy swaps in a newly loaded policy (rules file reload). Pending
// approvals keep the evaluation they were shown with.
func (g *Gate) SetPolicy(p *Policy) { g.policy.Store(p) }

// SetRulesError records (or, with "", clears) a failed rules reload for Health.
func (g *Gate) SetRulesError(msg string) {
	if msg == "" {
		g.rulesErr.Store(nil)
		return
	}
	g.rulesErr.Store(&msg)
}

// AddNotifier registers a frontend. Call before Start.
func (g *Gate) AddNotifier(n Notifier) {
	q := newNotifierQueue(n, g, g.done)
	g.mu.Lock()
	g.notifiers = append(g.notifiers, q)
	g.mu.Unlock()
}

func (g *Gate) now() time.Time { return g.cfg.Now() }

// newID returns a short random id: 16 base32 characters (80 bits), small
// enough for Telegram's 64-byte callback data.
func newID() string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // never happens on supported platforms
	}
	return strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
}

// Start loads the pending approvals (their ids, agents and deadlines
// only: nothing is decoded), expires those past their deadline, arms the
// timers of the rest and queues them for the notifiers to refresh, which
// read each approval when they get to it. It starts the background
// retention. Call once, after AddNotifier.
func (g *Gate) Start(ctx context.Context) error {
	g.mu.Lock()
	if g.started {
		g.mu.Unlock()
		return errors.New("gate already started")
	}
	g.started = true
	qs := g.notifiers
	g.mu.Unlock()
	for _, q := range qs {
		q.start()
	}
	go g.pruneLoop() // expired Always rules (expiry.go)
	refs, err := g.store.PendingRefs(ctx)
	if err != nil {
		return fmt.Errorf("load pending approvals: %w", err)
	}
	stored, err := g.store.AgentBytes(ctx)
	if err != nil {
		return fmt.Errorf("load stored bytes per agent: %w", err)
	}
	now := g.now()
	var expired, kept int
	var late []string
	g.mu.Lock()
	for agent, n := range stored {
		g.usageLocked(agent).bytes = n
	}
	for _, r := range refs {
		g.usageLocked(r.Agent).pending++
		if !now.Before(r.Deadline) {
			late = append(late, r.ID)
			continue
		}
		g.pending++
		g.armTimerLocked(r.ID, r.Deadline)
		kept++
	}
	g.mu.Unlock()
	// Every one of them waited through a restart: refreshes, queued
	// behind anything new.
	for _, q := range qs {
		for _, r := range refs {
			if now.Before(r.Deadline) {
				q.push(r.ID, now)
			}
		}
	}
	for _, id := range late {
		if _, err := g.expire(ctx, id); err != nil && !errors.Is(err, ErrAlreadyDecided) {
			return fmt.Errorf("expire approval %s: %w", id, err)
		}
		expired++
	}
	if g.cfg.Retention > 0 {
		go g.retain()
	}
	g.logger.Info("gate started", "pending", kept, "expired_on_start", expired)
	return nil
}

// Close stops timers and notifier goroutines.
// Waiters get ErrClosed. Pending approvals stay pending in the store.
func (g *Gate) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	for id, t := range g.timers {
		t.Stop()
		delete(g.timers, id)
	}
	for s := range g.subs {
		s.close()
		delete(g.subs, s)
	}
	close(g.done)
	qs := g.notifiers
	g.mu.Unlock()
	for _, q := range qs {
		q.wait()
	}
	return nil
}

func (g *Gate) isClosed() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// Get returns the approval with id, or ErrNotFound.
func (g *Gate) Get(ctx context.Context, id string) (*Approval, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	a, err := g.store.GetApproval(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("get approval %s: %w", id, err)
	}
	return a, nil
}

// ListPage returns one page of approvals, filtered in the store (see
// ListQuery). A Limit of 0 or less is DefaultPageSize, and above
// MaxPageSize is MaxPageSize; MaxBytes 0 is DefaultPageBytes.
func (g *Gate) ListPage(ctx context.Context, q ListQuery) (Page, error) {
	if q.Status != "" && !q.Status.Valid() {
		return Page{}, fmt.Errorf("%w: unknown status %q", ErrInvalid, q.Status)
	}
	if q.Limit <= 0 {
		q.Limit = DefaultPageSize
	}
	q.Limit = min(q.Limit, MaxPageSize)
	if q.MaxBytes <= 0 {
		q.MaxBytes = DefaultPageBytes
	}
	p, err := g.store.ListApprovalsPage(ctx, q)
	if err != nil {
		return Page{}, fmt.Errorf("list approvals: %w", err)
	}
	return p, nil
}

// Page sizes of ListPage: a page is bounded in count and in bytes, so a
// list costs the same whatever the store holds.
const (
	DefaultPageSize  = 100
	MaxPageSize      = 1000
	DefaultPageBytes = 4 << 20
)

// PendingCount is how many approvals are pending now (no store read).
func (g *Gate) PendingCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pending
}

// List returns approvals with status ("" for all), oldest first. It reads
// them all: ListPage is the bounded form.
func (g *Gate) List(ctx context.Context, status Status) ([]*Approval, error) {
	if status != "" && !status.Valid() {
		return nil, fmt.Errorf("%w: unknown status %q", ErrInvalid, status)
	}
	as, err := g.store.ListApprovals(ctx, status)
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	return as, nil
}

// WriteProber is a store that can tell whether it can be written, for
// Health: a store that reads fine but cannot write answers nothing but
// errors, and /healthz must say so.
type WriteProber interface {
	// ProbeWrite commits one small durable write, or says why it cannot.
	ProbeWrite(ctx context.Context) error
}

// healthProbeEvery bounds how often Health writes to the store: /healthz
// may be polled often, and each probe is an fsync.
const healthProbeEvery = 2 * time.Second

// probeStore returns the store's write error ("" when it can be written),
// probing at most every healthProbeEvery.
func (g *Gate) probeStore(ctx context.Context) string {
	p, ok := g.store.(WriteProber)
	if !ok {
		return ""
	}
	g.probeMu.Lock()
	defer g.probeMu.Unlock()
	if now := time.Now(); now.Sub(g.probedAt) >= healthProbeEvery {
		g.probedAt = now
		g.probeErr = ""
		if err := p.ProbeWrite(context.WithoutCancel(ctx)); err != nil {
			g.probeErr = "the store cannot be written: " + err.Error()
			g.logger.Error("store write probe failed", "err", err)
		}
	}
	return g.probeErr
}

// Health reports the gate's state: not OK when it is closed, the last
// rules reload failed, or the store cannot be written.
func (g *Gate) Health(ctx context.Context) Health {
	h := Health{OK: !g.isClosed()}
	if p := g.rulesErr.Load(); p != nil {
		h.OK = false
		h.RulesError = *p
	}
	if h.OK || h.RulesError != "" {
		if msg := g.probeStore(ctx); msg != "" {
			h.OK = false
			h.StoreError = msg
		}
	}
	g.mu.Lock()
	h.Pending = g.pending
	g.mu.Unlock()
	return h
}

// AddMessageRef records where a frontend showed an approval, so it can be
// edited after a decision or a restart. A ref for the same frontend and chat
// replaces the earlier one.
func (g *Gate) AddMessageRef(ctx context.Context, id string, ref MessageRef) (*Approval, error) {
	if ref.Frontend == "" || ref.MessageID == "" {
		return nil, fmt.Errorf("%w: message ref needs frontend and message id", ErrInvalid)
	}
	if ref.SentAt.IsZero() {
		ref.SentAt = g.now()
	}
	a, err := g.store.UpdateApproval(ctx, id, func(a *Approval) error {
		for i, m := range a.Messages {
			if m.Frontend == ref.Frontend && m.ChatID == ref.ChatID {
				a.Messages[i] = ref
				return nil
			}
		}
		a.Messages = append(a.Messages, ref)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record message of approval %s: %w", id, err)
	}
	return a, nil
}

// Value returns a frontend's stored value for key, or ErrNotFound.
func (g *Gate) Value(ctx context.Context, key string) (string, error) {
	v, err := g.store.GetValue(ctx, key)
	if err != nil {
		return "", fmt.Errorf("get value %s: %w", key, err)
	}
	return v, nil
}

// SetValue stores a frontend's value for key ("" deletes it).
func (g *Gate) SetValue(ctx context.Context, key, value string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if err := g.store.PutValue(ctx, key, value); err != nil {
		return fmt.Errorf("put value %s: %w", key, err)
	}
	return nil
}

// Audit returns audit entries after seq, at most limit (0: all).
func (g *Gate) Audit(ctx context.Context, after uint64, limit int) ([]AuditEntry, error) {
	es, err := g.store.ListAudit(ctx, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return es, nil
}

// VerifyAudit checks the audit chain.
func (g *Gate) VerifyAudit(ctx context.Context) (int, error) {
	n, err := g.store.VerifyAudit(ctx)
	if err != nil {
		return n, fmt.Errorf("verify audit: %w", err)
	}
	return n, nil
}

// Backup writes a consistent copy of the store to w, for stores that can
// (the bbolt store; not the in-memory one).
func (g *Gate) Backup(ctx context.Context, w io.Writer) (int64, error) {
	b, ok := g.store.(interface {
		Backup(context.Context, io.Writer) (int64, error)
	})
	if !ok {
		return 0, fmt.Errorf("this store cannot be backed up: %w", ErrInvalid)
	}
	n, err := b.Backup(ctx, w)
	if err != nil {
		return n, fmt.Errorf("back up the store: %w", err)
	}
	return n, nil
}

func validID(id string) error {
	if id == "" || len(id) > maxIDLen {
		return fmt.Errorf("%w: bad approval id", ErrInvalid)
	}
	return nil
}

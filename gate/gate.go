package gate

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Config holds the gate's lifecycle settings.
type Config struct {
	// Timeout is how long an approval waits for a person (default 10m).
	Timeout time.Duration
	// DenyMemory is how long a person's denial of an exact call is
	// remembered and repeated without prompting (default 5m; 0 disables).
	DenyMemory time.Duration
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
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
	Digest    string     `json:"digest,omitempty"` // if set, must equal the approval's digest
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
	Pending    int    `json:"pending"`
}

// errNotImplemented marks the skeleton while the lifecycle is written.
var errNotImplemented = errors.New("not implemented")

// Gate runs the approval lifecycle. It is safe for concurrent use.
type Gate struct {
	cfg    Config
	store  Store
	logger *slog.Logger
}

// New returns a gate on store with the compiled policy p.
func New(cfg Config, p *Policy, store Store, logger *slog.Logger) *Gate {
	return &Gate{cfg: cfg, store: store, logger: logger}
}

// SetPolicy swaps in a newly loaded policy (rules file reload).
func (g *Gate) SetPolicy(p *Policy) {}

// SetRulesError records (or, with "", clears) a failed rules reload for Health.
func (g *Gate) SetRulesError(msg string) {}

// AddNotifier registers a frontend. Call before Start.
func (g *Gate) AddNotifier(n Notifier) {}

// Start loads pending approvals, expires those past their deadline, and hands
// the rest to the notifiers to refresh. Call once.
func (g *Gate) Start(ctx context.Context) error { return errNotImplemented }

// Close stops timers and notifier goroutines. Waiters get ErrClosed.
func (g *Gate) Close() error { return nil }

// Evaluate answers a call from the rules without recording anything.
func (g *Gate) Evaluate(ctx context.Context, c Call) (Evaluation, error) {
	return Evaluation{}, errNotImplemented
}

// Submit evaluates a call. allow/deny are answered at once (status allowed or
// denied, audited, not stored as approvals). ask creates a pending approval,
// durable before any frontend hears of it; a call whose agent and
// idempotency key match an existing approval attaches to it instead.
// ErrInvalid (wrapped) for a bad call.
func (g *Gate) Submit(ctx context.Context, c Call) (*Approval, error) { return nil, errNotImplemented }

// Wait blocks until the approval with id is final or ctx ends, and returns
// it as it then is (still pending if ctx ended first; the error is nil then).
// ErrNotFound for an unknown id.
func (g *Gate) Wait(ctx context.Context, id string) (*Approval, error) {
	return nil, errNotImplemented
}

// Get returns the approval with id, or ErrNotFound.
func (g *Gate) Get(ctx context.Context, id string) (*Approval, error) { return nil, errNotImplemented }

// List returns approvals with status ("" for all), oldest first.
func (g *Gate) List(ctx context.Context, status Status) ([]*Approval, error) {
	return nil, errNotImplemented
}

// Decide applies a person's decision. Only the first decision counts:
// ErrAlreadyDecided (with the approval as it is) for the others;
// ErrDigestMismatch if d.Digest is set and differs; ErrNotFound.
// Authorization is the caller's job (frontends check their approver lists,
// the API its tokens).
func (g *Gate) Decide(ctx context.Context, id string, d Decision) (*Approval, error) {
	return nil, errNotImplemented
}

// Cancel closes a pending approval because its agent went away.
func (g *Gate) Cancel(ctx context.Context, id string, reason string) (*Approval, error) {
	return nil, errNotImplemented
}

// AddMessageRef records where a frontend showed an approval, so it can be
// edited after a decision or a restart. A ref for the same frontend and chat
// replaces the earlier one.
func (g *Gate) AddMessageRef(ctx context.Context, id string, ref MessageRef) (*Approval, error) {
	return nil, errNotImplemented
}

// Value returns a frontend's stored value for key, or ErrNotFound.
func (g *Gate) Value(ctx context.Context, key string) (string, error) { return "", errNotImplemented }

// SetValue stores a frontend's value for key ("" deletes it).
func (g *Gate) SetValue(ctx context.Context, key, value string) error { return errNotImplemented }

// Rules lists Always rules of agent ("" for all).
func (g *Gate) Rules(ctx context.Context, agent string) ([]AlwaysRule, error) {
	return nil, errNotImplemented
}

// AddRule validates and stores an Always rule (assigning its ID and
// CreatedAt), then resolves the agent's pending approvals that now allow.
func (g *Gate) AddRule(ctx context.Context, r AlwaysRule) (AlwaysRule, error) {
	return AlwaysRule{}, errNotImplemented
}

// RemoveRule deletes an Always rule, or ErrNotFound.
func (g *Gate) RemoveRule(ctx context.Context, id string) (AlwaysRule, error) {
	return AlwaysRule{}, errNotImplemented
}

// SetMode sets an agent's mode.
func (g *Gate) SetMode(ctx context.Context, agent string, m Mode) error { return errNotImplemented }

// Mode returns an agent's mode (interactive when never set).
func (g *Gate) Mode(ctx context.Context, agent string) (Mode, error) {
	return ModeInteractive, errNotImplemented
}

// Subscribe returns a channel of events. Every pending approval is sent
// first as approval_required (replay), then live events. The channel is
// closed when ctx ends or the gate closes. A subscriber too slow to keep up
// is dropped (its channel closed) rather than blocking the gate.
func (g *Gate) Subscribe(ctx context.Context) <-chan Event { return nil }

// Health reports the gate's state.
func (g *Gate) Health(ctx context.Context) Health { return Health{} }

// Audit returns audit entries after seq, at most limit (0: all).
func (g *Gate) Audit(ctx context.Context, after uint64, limit int) ([]AuditEntry, error) {
	return nil, errNotImplemented
}

// VerifyAudit checks the audit chain.
func (g *Gate) VerifyAudit(ctx context.Context) (int, error) { return 0, errNotImplemented }

package gate

import (
	"context"
	"errors"
	"time"
)

// Errors callers branch on. The API maps them to HTTP statuses in one place.
var (
	ErrNotFound       = errors.New("not found")
	ErrAlreadyDecided = errors.New("already decided")
	ErrDigestMismatch = errors.New("decision is for a different call input")
	ErrUnauthorized   = errors.New("not an authorized approver")
	ErrInvalid        = errors.New("invalid")
	ErrExists         = errors.New("already exists")
	ErrConflict       = errors.New("idempotency key conflict")
	ErrStoreVersion   = errors.New("store was written by a newer version")
	ErrClosed         = errors.New("gate is closed")
	// ErrTooMany is a limit reached: an agent's pending approvals or
	// stored bytes (the API answers 429; the agent may retry later).
	ErrTooMany = errors.New("limit reached")
)

// ApprovalStore keeps approvals durably. Every write returns only after it is
// committed to disk (fsync), so a caller may tell others about it.
type ApprovalStore interface {
	// CreateApproval stores a new pending approval and points the index of
	// (agent, idempotency key) at it, unless that index already points at
	// an approval prev: then, in the same write transaction, Reuse(prev, a)
	// decides. Attach: nothing is stored and prev is returned with
	// ErrExists. Conflict: nothing is stored and prev is returned with
	// Reuse's error (wrapping ErrConflict). Neither: a is stored and the
	// index moves to it. Lookup and create being one transaction, racing
	// submits of one key never make two approvals that Reuse would join.
	//
	// The audit entries, if any, are appended in the same transaction as
	// the approval (their ApprovalID set to a's when empty), so a stored
	// approval always has them and an entry never names an approval that
	// was not stored. Nothing is appended on attach or conflict.
	CreateApproval(ctx context.Context, a *Approval, audit ...AuditEntry) (*Approval, error)
	// GetApproval returns the approval with id, or ErrNotFound.
	GetApproval(ctx context.Context, id string) (*Approval, error)
	// FindApproval returns the latest approval for an agent's idempotency
	// key, or ErrNotFound.
	FindApproval(ctx context.Context, agent, idempotencyKey string) (*Approval, error)
	// UpdateApproval reads, changes with fn and writes the approval with id in
	// one transaction. If fn returns an error nothing is written and that
	// error is returned. ErrNotFound for an unknown id.
	UpdateApproval(ctx context.Context, id string, fn func(*Approval) error) (*Approval, error)
	// UpdateApprovalAudit is UpdateApproval for state changes: the audit
	// entry fn returns (nil: none; its ApprovalID defaults to id) is
	// appended in the same transaction as the changed approval, so a crash
	// never keeps one without the other.
	UpdateApprovalAudit(ctx context.Context, id string, fn func(*Approval) (*AuditEntry, error)) (*Approval, error)
	// ListApprovals returns approvals in creation order; status "" means all.
	// It decodes every approval it returns: lifecycle paths use
	// ListApprovalsPage or PendingRefs instead.
	ListApprovals(ctx context.Context, status Status) ([]*Approval, error)
	// ListApprovalsPage returns one page of approvals in creation order,
	// filtered in the store by its indexes (status pending and agent need no
	// decoding of other approvals). Page.Next is the cursor of the next
	// page, 0 when there is none; a page may be short (a byte bound, a scan
	// bound) and still have a next one.
	ListApprovalsPage(ctx context.Context, q ListQuery) (Page, error)
	// PendingRefs returns what the lifecycle needs of every pending
	// approval (id, agent, deadline, input size), in creation order,
	// without decoding the approvals.
	PendingRefs(ctx context.Context) ([]PendingRef, error)
	// AgentBytes returns the input bytes of every stored approval (any
	// status, until pruned), per agent.
	AgentBytes(ctx context.Context) (map[string]int64, error)
	// PruneApprovals deletes up to max final approvals decided (or, for
	// answers given at once, created) before before, oldest first, in one
	// transaction, and returns how many it deleted. Pending approvals and
	// the audit log are never touched. The idempotency index entry of a
	// deleted approval goes with it.
	PruneApprovals(ctx context.Context, before time.Time, max int) (int, error)
}

// ListQuery selects a page of approvals.
type ListQuery struct {
	Status Status // "" means every status
	Agent  string // "" means every agent
	After  uint64 // a Page.Next cursor; 0 starts at the oldest
	Limit  int    // at most this many approvals (must be positive)
	// MaxBytes bounds the stored size of the page (at least one approval
	// is returned whatever its size); 0 means no bound.
	MaxBytes int
}

// Page is one page of approvals.
type Page struct {
	Approvals []*Approval
	Next      uint64 // cursor for the next page; 0: no more
}

// PendingRef is a pending approval as the lifecycle knows it at start:
// its timer, its agent's quota and its prompt refresh need no more.
type PendingRef struct {
	ID        string
	Agent     string
	Deadline  time.Time
	InputSize int64
}

// RuleStore keeps Always rules and per-agent modes.
type RuleStore interface {
	// AddRule stores r, and the audit entries in the same transaction; the
	// caller sets the ID.
	AddRule(ctx context.Context, r AlwaysRule, audit ...AuditEntry) error
	// DeleteRule removes the rule with id and returns it, or ErrNotFound.
	DeleteRule(ctx context.Context, id string) (AlwaysRule, error)
	// ListRules returns the rules of agent, or of every agent for "".
	ListRules(ctx context.Context, agent string) ([]AlwaysRule, error)
	// SetMode stores an agent's mode; GetMode returns "" for an agent without one.
	// SetMode appends the audit entries in its transaction.
	SetMode(ctx context.Context, agent string, m Mode, audit ...AuditEntry) error
	GetMode(ctx context.Context, agent string) (Mode, error)
}

// Denial is a remembered person's denial of one exact call.
type Denial struct {
	Key        string    `json:"key"` // agent, tool and digest
	Reason     string    `json:"reason"`
	By         string    `json:"by"`
	ApprovalID string    `json:"approval_id"`
	Until      time.Time `json:"until"`
}

// DenialStore keeps denial memory.
type DenialStore interface {
	// RememberDenial stores d, replacing any earlier denial with the same key.
	RememberDenial(ctx context.Context, d Denial) error
	// RecentDenial returns the denial with key if it is still valid at now, or ErrNotFound.
	RecentDenial(ctx context.Context, key string, now time.Time) (Denial, error)
}

// AuditLog is the append-only, hash-chained audit trail.
type AuditLog interface {
	// AppendAudit assigns e its sequence number and hashes and stores it,
	// durably, before it returns. Concurrent appends may share one commit.
	AppendAudit(ctx context.Context, e AuditEntry) (AuditEntry, error)
	// ListAudit returns entries with Seq > after, at most limit (0: all).
	ListAudit(ctx context.Context, after uint64, limit int) ([]AuditEntry, error)
	// VerifyAudit checks the whole chain and returns the number of entries,
	// or an error naming the first broken entry.
	VerifyAudit(ctx context.Context) (int, error)
}

// ValueStore keeps small named values for frontends (a paired chat id, a
// Telegram update offset, ...), so they survive restarts.
type ValueStore interface {
	// GetValue returns the value of key, or ErrNotFound.
	GetValue(ctx context.Context, key string) (string, error)
	// PutValue stores value under key ("" deletes it).
	PutValue(ctx context.Context, key, value string) error
}

// Store is everything the gate keeps.
type Store interface {
	ApprovalStore
	RuleStore
	DenialStore
	AuditLog
	ValueStore
}

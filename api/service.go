package api

import (
	"context"
	"io"

	"approvalbot/gate"
)

// Service is what the server needs from the gate. *gate.Gate implements it,
// and tests serve the real gate (gate/gatetest). The contracts (errors,
// idempotency, who may call) are the gate's, documented on the methods of
// gate.Gate.
type Service interface {
	// Submit evaluates a call; ask creates (or attaches to) a pending approval.
	Submit(ctx context.Context, c gate.Call) (*gate.Approval, error)
	// Wait blocks until the approval is final or ctx ends and returns it as
	// it then is (still pending, with a nil error, if ctx ended first).
	Wait(ctx context.Context, id string) (*gate.Approval, error)
	// Get returns one approval, or gate.ErrNotFound.
	Get(ctx context.Context, id string) (*gate.Approval, error)
	// ListPage returns one page of approvals, filtered by status and
	// agent in the store, oldest first; Page.Next continues it.
	ListPage(ctx context.Context, q gate.ListQuery) (gate.Page, error)
	// Decide applies a person's decision; gate.ErrAlreadyDecided (with the
	// approval as it is) when someone decided first.
	Decide(ctx context.Context, id string, d gate.Decision) (*gate.Approval, error)
	// Cancel closes a pending approval because its agent went away.
	Cancel(ctx context.Context, id string, reason string) (*gate.Approval, error)
	// Rules lists Always rules of agent ("" for all).
	Rules(ctx context.Context, agent string) ([]gate.AlwaysRule, error)
	// AddRule validates and stores an Always rule, assigning its ID.
	AddRule(ctx context.Context, r gate.AlwaysRule) (gate.AlwaysRule, error)
	// RemoveRule deletes an Always rule, recording the approver by, or gate.ErrNotFound.
	RemoveRule(ctx context.Context, id, by string) (gate.AlwaysRule, error)
	// SetMode sets an agent's mode, recording the approver by.
	SetMode(ctx context.Context, agent string, m gate.Mode, by string) error
	// Mode returns an agent's mode.
	Mode(ctx context.Context, agent string) (gate.Mode, error)
	// Subscribe streams events: the pending approvals first, then live ones.
	EventSource
	// Health reports the gate's state for /healthz.
	Health(ctx context.Context) gate.Health
	// Audit returns audit entries after seq, at most limit (0: all).
	Audit(ctx context.Context, after uint64, limit int) ([]gate.AuditEntry, error)
	// VerifyAudit checks the audit chain and returns its length.
	VerifyAudit(ctx context.Context) (int, error)
	// Backup writes a consistent copy of the store to w.
	Backup(ctx context.Context, w io.Writer) (int64, error)
}

// EventSource is the part of the gate that streams approval events.
type EventSource interface {
	// Subscribe returns a channel of events, replaying every pending approval
	// first; it is closed when ctx ends, the gate closes, or the subscriber
	// is too slow.
	Subscribe(ctx context.Context) <-chan gate.Event
}

var _ Service = (*gate.Gate)(nil)

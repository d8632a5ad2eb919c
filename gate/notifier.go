package gate

import (
	"context"
	"errors"
	"time"
)

// ErrMessageGone is what Notifier.Update returns (wrapped or not) when the
// message can no longer be edited (deleted, too old): the gate then shows
// a pending approval anew, and forgets a final one.
var ErrMessageGone = errors.New("message gone")

// View is what the gate asks a frontend to show: an approval as it is now
// (pending with live choices, or final with its outcome) and whether the
// daemon restarted while it waited.
type View struct {
	Approval *Approval
	// Restarted is when the daemon restarted with the approval still
	// pending; zero if it did not. Frontends say "still waiting" with it.
	Restarted time.Time
	// Items, when set, make this a grouped view of one agent session's
	// calls (shown to a GroupNotifier only): every call in the message, in
	// order, pending ones in full and decided ones with their outcome.
	// Approval is then the first pending item (else the first item).
	Items []*Approval
	// Batch is what the grouped view's "Approve all" / "Deny all" decide
	// (Gate.DecideBatch); nil when fewer than two of its calls are pending.
	Batch *Batch
}

// GroupNotifier is a Notifier that can show grouped views: when one agent
// session has two or more calls pending, the gate shows them in one
// message (View.Items, View.Batch) instead of one message each.
type GroupNotifier interface {
	Notifier
	// Groups reports whether the frontend wants grouped views.
	Groups() bool
}

// Notifier is a frontend that shows approvals to people (Telegram, Slack).
// It only renders and sends: the gate decides what to show and when, keeps
// the message references, and retries. It calls a notifier from one
// goroutine per notifier, after the approval is durable, and re-reads the
// approval before every call, so a notifier never shows a decided call
// with live buttons; a slow or failing notifier never blocks the gate or
// another notifier. Decisions come back through Gate.Decide.
type Notifier interface {
	// Name identifies the frontend ("telegram", "slack") in MessageRefs and logs.
	Name() string
	// Show sends a new message for v (a pending approval) and says where it
	// went. It must not drop the prompt: it retries (paced to the
	// platform's limits) until it is sent, the failure is permanent, or ctx
	// ends. The gate records the returned ref with the approval.
	Show(ctx context.Context, v View) (MessageRef, error)
	// Update edits the message at ref, which this notifier returned from
	// Show, to show v: its outcome and no buttons once the approval is
	// final, or a refreshed prompt with working buttons after a restart.
	// ErrMessageGone if the message cannot be edited any more.
	Update(ctx context.Context, ref MessageRef, v View) error
}

package gate

import "context"

// Notifier is a frontend that shows approvals to people (Telegram, Slack).
// The gate calls it from its own goroutine per notifier, after the approval
// is durable; a slow or failing notifier never blocks the gate or another
// notifier. Decisions come back through Gate.Decide.
type Notifier interface {
	// Name identifies the frontend ("telegram", "slack") in MessageRefs and logs.
	Name() string
	// Notify shows a pending approval. It is also called after a restart for
	// every approval still pending (a.Restarts > 0): the frontend then edits
	// the message it has in a.Messages, or sends one if it has none. It must
	// not drop the prompt: it retries until ctx ends.
	Notify(ctx context.Context, a *Approval) error
	// Resolved shows a final approval (decided anywhere, expired, cancelled)
	// on the frontend's messages for it.
	Resolved(ctx context.Context, a *Approval) error
}

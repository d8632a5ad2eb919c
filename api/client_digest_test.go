package api

import (
	"context"
	"errors"
	"testing"

	"approvalbot/gate"
)

// TestClientDecide: a decision bound to another input is refused and
// decides nothing; one bound to the call's digest decides it, as the
// client's surface; a second comes back with the approval as it is.
func TestClientDecide(t *testing.T) {
	e := newEnv(t, tokenConfig())
	c := NewClient(e.ts.URL, tokAdmin, WithVia("watch"))
	ctx := context.Background()

	a := e.pending(t, "alice", "k1")
	_, err := c.Decide(ctx, a.ID, gate.Decision{Approve: true, By: "ana", Digest: "0123456789abcdef"})
	if !errors.Is(err, gate.ErrDigestMismatch) {
		t.Fatalf("another input's digest: %v, want a digest mismatch", err)
	}
	if got, _ := e.g.Get(ctx, a.ID); got.Status != gate.StatusPending {
		t.Fatalf("the refused decision decided: %s", got.Status)
	}
	got, err := c.Decide(ctx, a.ID, gate.Decision{Stop: true, By: "ana", Digest: a.Digest[:16]})
	if err != nil || got.Status != gate.StatusDeniedStop || got.Via != "watch" || got.DecidedBy != "ana" {
		t.Fatalf("decide: %v %+v", err, got)
	}
	again, err := c.Decide(ctx, a.ID, gate.Decision{Approve: true, Always: true, Scope: gate.ScopeSession, Digest: a.Digest})
	if !errors.Is(err, gate.ErrAlreadyDecided) || again == nil || again.Status != gate.StatusDeniedStop {
		t.Fatalf("second decision: %v %+v, want already decided with the approval", err, again)
	}
}

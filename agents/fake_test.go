package agents

import (
	"context"
	"errors"
	"sync"
	"time"

	"approvalbot/gate"
)

// errFakeUnreachable stands in for api.ErrUnreachable.
var errFakeUnreachable = errors.New("fake: daemon unreachable")

// fakeDecider answers from a function and records what it was asked.
type fakeDecider struct {
	answer func(ctx context.Context, c gate.Call) (*gate.Approval, error)

	mu      sync.Mutex
	calls   []gate.Call
	cancels []string
	waiting chan gate.Call // if set, receives each call when it starts waiting
}

func (f *fakeDecider) SubmitAndWait(ctx context.Context, c gate.Call, grace time.Duration) (*gate.Approval, error) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	if f.waiting != nil {
		f.waiting <- c
	}
	return f.answer(ctx, c)
}

// Submit answers like SubmitAndWait: the fake has no waiting of its own.
func (f *fakeDecider) Submit(ctx context.Context, c gate.Call, _ time.Duration) (*gate.Approval, error) {
	return f.SubmitAndWait(ctx, c, 0)
}

func (f *fakeDecider) Cancel(ctx context.Context, id, reason string) (*gate.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancels = append(f.cancels, id)
	return &gate.Approval{ID: id, Status: gate.StatusCancelled, Decision: gate.Deny, Reason: reason}, nil
}

func (f *fakeDecider) recorded() ([]gate.Call, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]gate.Call(nil), f.calls...), append([]string(nil), f.cancels...)
}

// answerWith returns the approval a (with the call's fields) at once.
func answerWith(a gate.Approval) func(context.Context, gate.Call) (*gate.Approval, error) {
	return func(_ context.Context, c gate.Call) (*gate.Approval, error) {
		out := a
		out.Agent, out.Tool, out.Input, out.SessionID = c.Agent, c.Tool, c.Input, c.SessionID
		if out.ID == "" {
			out.ID = "ap-1"
		}
		return &out, nil
	}
}

// answerPendingUntilDone blocks until ctx ends, then returns the pending
// approval with ctx's error, as the API client does.
func answerPendingUntilDone(ctx context.Context, c gate.Call) (*gate.Approval, error) {
	<-ctx.Done()
	return &gate.Approval{ID: "ap-pending", Status: gate.StatusPending, Agent: c.Agent, Tool: c.Tool}, ctx.Err()
}

func answerErr(err error) func(context.Context, gate.Call) (*gate.Approval, error) {
	return func(context.Context, gate.Call) (*gate.Approval, error) { return nil, err }
}

func isFakeUnreachable(err error) bool { return errors.Is(err, errFakeUnreachable) }

// Approvals as the daemon returns them for each outcome.
var (
	apAllowed        = gate.Approval{Status: gate.StatusAllowed, Decision: gate.Allow, Reason: `Bash "git status" allowed by rules.jsonc:4`, Via: "rules"}
	apApproved       = gate.Approval{Status: gate.StatusApproved, Decision: gate.Allow, DecidedBy: "@ana", Via: "telegram"}
	apApprovedAlways = gate.Approval{Status: gate.StatusApprovedAlways, Decision: gate.Allow, DecidedBy: "@ana", Via: "slack"}
	apDeniedPerson   = gate.Approval{Status: gate.StatusDenied, Decision: gate.Deny, DecidedBy: "@ana", Via: "telegram", Reason: "use the staging branch"}
	apDeniedRule     = gate.Approval{Status: gate.StatusDenied, Decision: gate.Deny, Via: "rules", Reason: `rm -rf * denied by rules.jsonc:7`}
	apDeniedStop     = gate.Approval{Status: gate.StatusDeniedStop, Decision: gate.Deny, DecidedBy: "@ana", Via: "slack", Reason: "wrong repo"}
	apExpired        = gate.Approval{Status: gate.StatusExpired, Decision: gate.Deny, Via: "timeout"}
	apCancelled      = gate.Approval{Status: gate.StatusCancelled, Decision: gate.Deny, Reason: "agent went away"}
	apInconsistent   = gate.Approval{Status: gate.StatusApproved, Decision: gate.Deny}
	apNoDecision     = gate.Approval{Status: gate.StatusAllowed}
	apUnknownStatus  = gate.Approval{Status: "maybe", Decision: gate.Allow}
)

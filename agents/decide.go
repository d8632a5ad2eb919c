// Package agents adapts real agents' wire formats to approvalbot's API:
// the Claude Code command hook (PreToolUse, PermissionRequest), the stdio MCP
// permission-prompt tool for `claude -p --permission-prompt-tool`, and the
// Codex command hook. Each adapter parses the agent's payload, submits the
// call through a Decider, waits for the final answer and writes it back in
// the agent's own format. Anything that cannot be understood, and any
// failure to reach a decision, becomes a deny (fail closed).
package agents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"approvalbot/gate"
)

// Decider submits a call to the approvalbot daemon and waits for the final
// answer. *api.Client implements it; tests use a fake.
type Decider interface {
	// SubmitAndWait posts the call and waits until its approval is final or
	// ctx ends. It re-posts with the same idempotency key after connection
	// losses. Before the daemon was reached once, it gives up after
	// connectGrace with an error. When ctx ends first it returns the approval
	// as last seen (pending), if any, with an error.
	SubmitAndWait(ctx context.Context, call gate.Call, connectGrace time.Duration) (*gate.Approval, error)
	// Submit posts the call once and returns its approval without waiting
	// for a person (it may be pending).
	Submit(ctx context.Context, call gate.Call, wait time.Duration) (*gate.Approval, error)
	// Cancel closes a pending approval because the agent went away.
	Cancel(ctx context.Context, id, reason string) (*gate.Approval, error)
}

// Defaults for Options fields left zero.
const (
	// DefaultHookTimeout is the hook's own deadline: a little under the
	// 900 s `timeout` the README puts on the hook in the agent's settings, so
	// the hook answers deny itself instead of being killed (a killed hook is
	// a hook failure, which Claude Code without onFailure "block" lets through).
	DefaultHookTimeout = 880 * time.Second
	// DefaultConnectGrace is how long a hook keeps trying to reach a daemon
	// it has never reached (a daemon that is just starting).
	DefaultConnectGrace = 3 * time.Second
	// cancelTimeout bounds the Cancel after the agent cancelled the call
	// (it is waiting for the hook to exit).
	cancelTimeout = 2 * time.Second
	// withdrawGrace bounds the retried Cancel after the hook's own deadline,
	// which may find the daemon restarting; it fits in the 20 s between
	// DefaultHookTimeout and the README's hook timeout.
	withdrawGrace = 10 * time.Second
	// maxReasonRunes keeps reasons sent back to an agent readable.
	maxReasonRunes = 1000
)

// Options configure an adapter.
type Options struct {
	// Agent is the agent name the calls are submitted under.
	Agent string
	// Timeout is the adapter's own deadline per call (0: DefaultHookTimeout;
	// negative: none). On it the answer is deny ("no decision in time").
	Timeout time.Duration
	// ConnectGrace: see Decider.SubmitAndWait (0: DefaultConnectGrace).
	ConnectGrace time.Duration
	// OnError is the answer when the daemon cannot be reached: gate.Deny
	// (default) or gate.Ask, for adapters whose agent supports ask.
	OnError gate.Action
	// IsUnreachable reports whether an error from the Decider means the daemon
	// could not be reached. nil: no error counts as unreachable (deny).
	IsUnreachable func(error) bool
	// Cwd is the working directory reported for calls whose payload has none
	// (the MCP server's).
	Cwd string
	// Logger gets diagnostics (never on stdout). nil: discard.
	Logger *slog.Logger
	// Defer: when a person is needed, do not wait; answer Verdict.Defer and
	// leave the approval pending (Claude Code's `defer`, honoured only by
	// `claude -p`). Used for PreToolUse events only.
	Defer bool
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

func (o Options) timeout() time.Duration {
	if o.Timeout == 0 {
		return DefaultHookTimeout
	}
	return o.Timeout
}

func (o Options) connectGrace() time.Duration {
	if o.ConnectGrace <= 0 {
		return DefaultConnectGrace
	}
	return o.ConnectGrace
}

// Verdict is an adapter's answer to the agent.
type Verdict struct {
	// Action is gate.Allow, gate.Deny, or gate.Ask (only when the daemon was
	// unreachable and Options.OnError is Ask).
	Action gate.Action
	// Reason is shown to the model (deny) or the user.
	Reason string
	// Stop asks the agent to end its turn (a person chose Deny and stop).
	Stop bool
	// StopReason is shown to the user when Stop is set.
	StopReason string
	// Defer: the approval is pending and stays so; the agent run exits and
	// is resumed after the decision (Action is Deny, for any host that
	// does not know defer).
	Defer bool
}

func deny(format string, args ...any) Verdict {
	return Verdict{Action: gate.Deny, Reason: "approvalbot: " + fmt.Sprintf(format, args...)}
}

// decide submits call and turns what comes back, or the lack of it, into a
// Verdict. Only a final approval that says allow becomes an allow.
func decide(ctx context.Context, d Decider, call gate.Call, o Options) Verdict {
	if o.Defer {
		return decideOrDefer(ctx, d, call, o)
	}
	log := o.logger()
	waitCtx, cancel := ctx, context.CancelFunc(func() {})
	if t := o.timeout(); t > 0 {
		waitCtx, cancel = context.WithTimeout(ctx, t)
	}
	defer cancel()
	a, err := d.SubmitAndWait(waitCtx, call, o.connectGrace())
	if err == nil && a != nil && a.Status.Final() {
		return verdictFor(a)
	}
	if err == nil {
		err = errors.New("no final answer")
	}
	switch {
	case ctx.Err() != nil:
		// The agent cancelled the hook (signal) or the MCP request: withdraw
		// the prompt so nobody approves a call that will never run.
		w := withdraw(ctx, d, a, "the agent cancelled the call", cancelTimeout, log)
		return deny("the call was cancelled before a decision; %s", w)
	case waitCtx.Err() != nil:
		w := withdraw(ctx, d, a, "the agent's hook stopped waiting", withdrawGrace, log)
		return deny("no decision in time (waited %s); %s", o.timeout(), w)
	case errors.Is(err, gate.ErrConflict):
		// Never retried: the key names another call, whose decision this
		// call must not receive.
		log.Warn("approvalbot: idempotency key reused for another call", "err", err)
		return deny("refused, not run: this call reuses the id %q of a different call, and a decision never carries over to another call (%s)",
			clip(call.IdempotencyKey), clip(err.Error()))
	case errors.Is(err, gate.ErrInvalid):
		return deny("refused, not run: the daemon cannot judge this call's input unambiguously (%s). Send the input with each key once, spelled exactly",
			clip(err.Error()))
	case o.IsUnreachable != nil && o.IsUnreachable(err):
		log.Warn("approvalbot daemon unreachable", "err", err)
		if o.OnError == gate.Ask {
			return Verdict{Action: gate.Ask, Reason: fmt.Sprintf("approvalbot: daemon unreachable (%s); asking here instead", clip(err.Error()))}
		}
		return deny("daemon unreachable, denied to be safe (%s). Start it with `approvalbot serve` or check APPROVALBOT_URL", clip(err.Error()))
	default:
		log.Warn("approvalbot: no decision", "err", err)
		w := withdraw(ctx, d, a, "the agent's hook failed", cancelTimeout, log)
		return deny("no decision, denied to be safe: %s; %s", clip(err.Error()), w)
	}
}

// withdraw cancels a still-pending approval, retrying with backoff for up
// to grace (the daemon may be restarting), and says what became of it, for
// the agent's message: only an approval the daemon confirmed as closed is
// reported as withdrawn.
func withdraw(ctx context.Context, d Decider, a *gate.Approval, reason string, grace time.Duration, log *slog.Logger) string {
	if a == nil || a.ID == "" {
		return "no approval was recorded for it"
	}
	if a.Status != gate.StatusPending {
		return "its approval is " + string(a.Status)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	backoff := 100 * time.Millisecond
	for {
		got, err := d.Cancel(cctx, a.ID, reason)
		switch {
		case err == nil:
			return "the approval was withdrawn"
		case errors.Is(err, gate.ErrAlreadyDecided):
			if got != nil {
				return fmt.Sprintf("the approval was closed as %s before it could be withdrawn; the call was not run", got.Status)
			}
			return "the approval was closed before it could be withdrawn; the call was not run"
		case errors.Is(err, gate.ErrNotFound):
			return "the daemon no longer knows the approval"
		}
		t := time.NewTimer(backoff)
		select {
		case <-cctx.Done():
			t.Stop()
			log.Warn("cancel approval", "approval", a.ID, "err", err)
			return fmt.Sprintf("the approval %s could not be withdrawn (%s); it stays pending until %s, and the call was not run",
				a.ID, clip(err.Error()), a.Deadline.Format(time.RFC3339))
		case <-t.C:
		}
		backoff = min(backoff*2, time.Second)
	}
}

// verdictFor maps a final approval to a verdict. An allow needs both an
// allowing status and the decision allow; everything else denies.
func verdictFor(a *gate.Approval) Verdict {
	who := a.DecidedBy
	if a.Via != "" && who != "" {
		who += " via " + a.Via
	}
	switch a.Status {
	case gate.StatusAllowed, gate.StatusApproved, gate.StatusApprovedAlways:
		if a.Decision != gate.Allow {
			return deny("inconsistent answer from the daemon (status %s, decision %q), denied to be safe", a.Status, a.Decision)
		}
		switch {
		case a.Status == gate.StatusAllowed:
			return Verdict{Action: gate.Allow, Reason: withReason("approvalbot: allowed by rule", a.Reason)}
		case who != "":
			return Verdict{Action: gate.Allow, Reason: "approvalbot: approved by " + clip(who)}
		default:
			return Verdict{Action: gate.Allow, Reason: "approvalbot: approved"}
		}
	case gate.StatusDenied:
		if a.Via == "rules" || who == "" {
			return Verdict{Action: gate.Deny, Reason: withReason("approvalbot: denied by rule", a.Reason)}
		}
		return Verdict{Action: gate.Deny, Reason: withReason("approvalbot: denied by "+clip(who), a.Reason)}
	case gate.StatusDeniedStop:
		by := "a person"
		if who != "" {
			by = clip(who)
		}
		return Verdict{
			Action:     gate.Deny,
			Reason:     withReason("approvalbot: denied by "+by+", who asked you to stop and wait for instructions", a.Reason),
			Stop:       true,
			StopReason: withReason("approvalbot: "+by+" denied a tool call and stopped the turn", a.Reason),
		}
	case gate.StatusExpired:
		return deny("no decision before the approval expired; this is not a person's denial, the call was not run")
	case gate.StatusCancelled:
		return Verdict{Action: gate.Deny, Reason: withReason("approvalbot: the approval was cancelled", a.Reason)}
	default:
		return deny("unexpected status %q, denied to be safe", a.Status)
	}
}

func withReason(prefix, reason string) string {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return prefix
	}
	return prefix + ": " + clip(reason)
}

// clip bounds s to maxReasonRunes runes.
func clip(s string) string {
	n := 0
	for i := range s {
		if n == maxReasonRunes {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// decideOrDefer submits call once without waiting: a final answer (a rule,
// or a decision made while the run was paused, found again by the
// tool-use id when the session is resumed) is the verdict; a pending one is
// deferred, and the approval stays pending for the person. Errors deny,
// as in decide.
func decideOrDefer(ctx context.Context, d Decider, call gate.Call, o Options) Verdict {
	call.Deferred = true
	sctx, cancel := context.WithTimeout(ctx, min(o.connectGrace()+5*time.Second, max(o.timeout(), time.Second)))
	defer cancel()
	a, err := d.Submit(sctx, call, 0)
	switch {
	case err == nil && a != nil && a.Status.Final():
		return verdictFor(a)
	case err == nil && a != nil && a.Status == gate.StatusPending:
		v := deny("waiting for a person to decide (approval %s); the run pauses here and is resumed after the decision", a.ID)
		v.Defer = true
		return v
	case err == nil:
		return deny("no answer from the daemon, denied to be safe")
	case errors.Is(err, gate.ErrConflict):
		return deny("refused, not run: this call reuses the id %q of a different call, and a decision never carries over to another call (%s)",
			clip(call.IdempotencyKey), clip(err.Error()))
	case o.IsUnreachable != nil && o.IsUnreachable(err):
		o.logger().Warn("approvalbot daemon unreachable", "err", err)
		return deny("daemon unreachable, denied to be safe (%s). Start it with `approvalbot serve` or check APPROVALBOT_URL", clip(err.Error()))
	default:
		o.logger().Warn("approvalbot: no decision", "err", err)
		return deny("no decision, denied to be safe: %s", clip(err.Error()))
	}
}

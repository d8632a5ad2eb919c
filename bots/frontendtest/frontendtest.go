// Package frontendtest is the contract every approvalbot frontend passes
// (issue #16), in the spirit of alertmanager's notify/test: one suite of
// cases, run against the real gate on an in-memory store, that Telegram,
// Slack and the terminal frontend all run, and that a new frontend runs by
// implementing Driver in its own contract_test.go:
//
//	func TestContract(t *testing.T) {
//		frontendtest.Run(t, func(t *testing.T) frontendtest.Driver { return newDriver(t) })
//	}
//
// It is imported by tests only; the approvalbot binary never links it.
//
// A Driver starts its frontend against a local emulator of the platform
// (bots/telegramtest, bots/slacktest, a terminal for watch) and acts as the
// people in the cases: it reads the prompt a person sees and presses what
// they would press. The suite owns the gate: it builds it, submits the
// calls, restarts it, and checks the outcome both in the gate and in what
// the people see.
package frontendtest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalbot/gate"
	"approvalbot/gate/gatetest"
	"approvalbot/prompt"
)

// User is a person in the cases; a Driver maps each to an identity on its
// platform (a Telegram user id, a Slack user id, an API token).
type User string

// The people in the cases.
const (
	// Approver is in Setup.Approvers (unless the case empties the list).
	Approver User = "approver"
	// Stranger is never an approver: someone else in the chat, or a
	// terminal holding a credential that is not an approver's.
	Stranger User = "stranger"
)

// Setup is how the suite asks a Driver to start its frontend.
type Setup struct {
	// Env is the gate (real, on an in-memory store) the frontend shows. It
	// is not started yet: a chat frontend adds itself as a notifier in
	// Start; the suite starts the gate after Start returns.
	Env *gatetest.Env
	// Approvers are the people allowed to decide; empty means nobody.
	Approvers []User
	// RateLimit is how many of the frontend's next sends of a prompt the
	// emulator refuses as rate limited (429 with a retry-after), as the
	// platform does under a burst.
	RateLimit int
	// Drops is how many of the sends after those the emulator answers by
	// dropping the connection (a transport error, which carries the URL).
	Drops int
}

// Choice is something a person can press on a prompt.
type Choice struct {
	Kind prompt.ChoiceKind
	// Scope is the Always step's answer (prompt.ScopeKeySession or
	// prompt.ScopeKeyAgent) when Kind is prompt.ChoiceAlways.
	Scope string
}

// The choices the cases press.
var (
	Approve       = Choice{Kind: prompt.ChoiceApprove}
	Deny          = Choice{Kind: prompt.ChoiceDeny}
	Stop          = Choice{Kind: prompt.ChoiceStop}
	AlwaysSession = Choice{Kind: prompt.ChoiceAlways, Scope: prompt.ScopeKeySession}
	AlwaysAgent   = Choice{Kind: prompt.ChoiceAlways, Scope: prompt.ScopeKeyAgent}
)

// Prompt is one version of an approval's prompt as a person saw it: as it
// was sent, or as it was after an edit.
type Prompt struct {
	// Message names the message it is in (a chat message id, "box" on a
	// terminal): a prompt sent again is in a new message.
	Message string
	// Text is what a person reads, markup removed.
	Text string
	// Choices are the choices it offers, in the order shown; none once the
	// approval is final.
	Choices []prompt.ChoiceKind
	// Live says the choices can be pressed.
	Live bool
	// Raw is the Driver's own handle on this version, for pressing its
	// choices later (an old message's buttons after a restart).
	Raw any
}

// Press is one press of a choice on an approval's prompt.
type Press struct {
	ID     string
	Choice Choice
	As     User
	// On is the version whose buttons are pressed; nil: the newest.
	On *Prompt
	// Tamper alters the digest the press carries (a forged or stale
	// button), so it names a different call input than the approval's.
	Tamper bool
}

// Answer is what the presser was told in reply (an alert, an ephemeral
// message, a status line); empty if nothing.
type Answer struct {
	Text string
}

// Driver runs one frontend for the suite. Run makes a new Driver for each
// case; its methods are called from the case's goroutine.
type Driver interface {
	// Name is the frontend's name: Decision.Via of what it decides.
	Name() string
	// Skips names the cases (Case* constants) that do not apply to the
	// frontend, each with the reason Run reports with t.Skip.
	Skips() map[string]string
	// Start starts the frontend on s.Env's gate, with its emulator. The
	// suite calls it again after Stop, with a new gate on the same store
	// (a daemon restart); the emulator and what it shows persist, as the
	// platform would.
	Start(t *testing.T, s Setup)
	// Stop stops the frontend; the suite has closed the gate.
	Stop(t *testing.T)
	// Hold makes the next prompt the frontend sends wait until release is
	// called; held is closed once that send has reached the emulator. A
	// frontend that shows one approval at a time (a terminal) holds later
	// prompts behind the one shown: held is closed and release does nothing.
	Hold(t *testing.T) (held <-chan struct{}, release func())
	// Prompts returns every version of the prompt of approval id that
	// people have seen so far, oldest first (none yet: empty). The newest
	// is what they see now.
	Prompts(t *testing.T, id string) []Prompt
	// Press presses p's choice as p.As and returns once the frontend has
	// answered the presser, or the press had its effect.
	Press(t *testing.T, p Press) Answer
	// Full returns the whole content a person gets by asking for it (a
	// "Full" button, a thread, scrolling), without deciding anything.
	Full(t *testing.T, id string) string
	// Logs returns what the frontend has logged so far, and what it
	// showed besides prompts (error lines, status lines).
	Logs() string
	// Secrets are the credentials the frontend holds (tokens): none may
	// appear in a log line, an answer or a prompt.
	Secrets() []string
}

// Notifier is implemented by a Driver whose frontend is a gate.Notifier:
// the gate records where it showed each prompt (Approval.Messages) and, after
// a restart, edits those messages. CaseRestart then waits for that record
// before it restarts the gate.
type Notifier interface {
	Notifies() bool
}

// Scroller is implemented by a Driver whose frontend shows a long prompt
// in part, scrolled, rather than cut with prompt's "✂" marker (a terminal:
// "↓ 40 more line(s) below (PgDn)"). CaseFull then accepts its marker, and
// Full returns what scrolling through shows.
type Scroller interface {
	// ScrollMarker is text the prompt shows while part of it is out of view.
	ScrollMarker() string
}

// Tamper changes every hex digit of a digest (prefix), keeping its length:
// what a forged or stale button would carry.
func Tamper(digest string) string {
	const hex = "0123456789abcdef"
	b := []byte(digest)
	for i, c := range b {
		if j := strings.IndexByte(hex, c); j >= 0 {
			b[i] = hex[(j+1)%len(hex)]
		}
	}
	return string(b)
}

// Newest waits until d shows a prompt for approval id and returns its
// newest version (what people see now).
func Newest(t *testing.T, d Driver, id string) Prompt {
	t.Helper()
	var p Prompt
	gatetest.Eventually(t, "the prompt of "+id, func() bool {
		vs := d.Prompts(t, id)
		if len(vs) > 0 {
			p = vs[len(vs)-1]
		}
		return len(vs) > 0
	})
	return p
}

// Context is a context for one wait of a driver, ended with the test (a
// bound on a hang, not a timing assertion).
func Context(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Serve runs a chat frontend's update loop (run, until its context ends)
// for a gate it is the notifier of, and returns the function that stops
// it as a daemon does: the loop, then the gate (whose queue sends through
// the frontend), then the frontend (close). It also runs when the test ends.
func Serve(t *testing.T, g *gate.Gate, run func(context.Context) error, close func() error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("frontend's Run: %v", err)
		}
		g.Close()
		close()
	})
	t.Cleanup(stop)
	return stop
}

// Target is the version p presses on: p.On, else the newest.
func Target(t *testing.T, d Driver, p Press) Prompt {
	t.Helper()
	if p.On != nil {
		return *p.On
	}
	return Newest(t, d, p.ID)
}

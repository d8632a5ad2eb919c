package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"approvalbot/gate"
)

// Shown is what a prompt message showed when it was last sent or edited:
// a reply in words to it decides those calls (or that batch), never ones
// that came later. Frontends keep it per message in the gate's value
// store, encoded with Encode.
type Shown struct {
	IDs     []string `json:"ids"`               // its calls, pending first
	Digests []string `json:"digests"`           // their digests, as shown
	Pending int      `json:"pending"`           // how many of IDs were pending
	Batch   string   `json:"batch,omitempty"`   // a grouped view's batch
	BDigest string   `json:"bdigest,omitempty"` // and its digest
}

// ShownOf is what a message rendering v shows.
func ShownOf(v gate.View) Shown {
	var s Shown
	items := v.Items
	if len(items) == 0 {
		items = []*gate.Approval{v.Approval}
	}
	for _, final := range []bool{false, true} {
		for _, a := range items {
			if a.Status.Final() == final {
				s.IDs, s.Digests = append(s.IDs, a.ID), append(s.Digests, DigestPrefix(a))
				if !final {
					s.Pending++
				}
			}
		}
	}
	if v.Batch != nil {
		s.Batch, s.BDigest = v.Batch.ID, v.Batch.Digest()
	}
	return s
}

// Encode is s as stored.
func (s Shown) Encode() string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

// DecodeShown reads what Encode stored; ok is false for anything else.
func DecodeShown(raw string) (s Shown, ok bool) {
	if json.Unmarshal([]byte(raw), &s) != nil || len(s.IDs) == 0 || len(s.IDs) != len(s.Digests) {
		return Shown{}, false
	}
	return s, true
}

// BatchReply reports whether a reply to a message showing s decides its
// batch (a grouped view with two or more calls pending) rather than one call.
func (s Shown) BatchReply() bool { return s.Batch != "" && s.Pending > 1 }

// Texts a reply in words gets, on every frontend.
const (
	ReplyNotApprover   = "You are not an approver here; nothing was decided."
	ReplyAlwaysInBatch = "Always is per call: use a call's buttons, or reply to its own prompt. Nothing was decided."
	ReplyFailed        = "Could not record the decision; nothing was decided."
	ReplyMismatch      = "This prompt was made for a different call input; nothing was decided."
	ReplyNoAlways      = "This call has no safe Always pattern; reply \"yes\" to approve it once."
	ReplyNotPending    = "This call is no longer pending; nothing was decided."
)

// ReplyDecision is the gate decision of reply r (not unclear) to one
// call, made by who at now, before the frontend fills By, Via and Digest.
// askScope is true for an Always that named no scope: the frontend shows
// the scope step instead of deciding.
func ReplyDecision(r Reply, who string, now time.Time) (d gate.Decision, askScope bool) {
	switch r.Kind {
	case ReplyApprove:
		return gate.Decision{Approve: true}, false
	case ReplyAlways:
		sc, ok := ScopeChoiceOf(r.Scope)
		if !ok {
			return gate.Decision{}, true
		}
		return AlwaysDecision(sc, now), false
	case ReplyStop:
		d = gate.Decision{Stop: true, Reason: r.Reason}
		if d.Reason == "" {
			d.Reason = "stopped by " + who
		}
		return d, false
	}
	return gate.Decision{Reason: r.Reason}, false
}

// ReplyBatchDecision is the gate decision of reply r (not unclear, not
// Always: see ReplyAlwaysInBatch) to a grouped view's batch.
func ReplyBatchDecision(r Reply) gate.Decision {
	return gate.Decision{Approve: r.Kind == ReplyApprove, Stop: r.Kind == ReplyStop, Reason: r.Reason}
}

// ReplyDecided is the answer to a reply that decided (or tried to decide)
// one call: its outcome, or why nothing was decided.
func ReplyDecided(a *gate.Approval, err error) (text string, failed bool) {
	switch {
	case err == nil:
		return Outcome(a), false
	case errors.Is(err, gate.ErrAlreadyDecided) && a != nil:
		return "Already decided: " + Outcome(a), false
	case errors.Is(err, gate.ErrDigestMismatch):
		return ReplyMismatch, false
	case errors.Is(err, gate.ErrInvalid):
		return VisibleLine("Nothing was decided: " + err.Error()), false
	}
	return ReplyFailed, true
}

// AlreadyDecided says who decided each of as, for a reply to a prompt
// with nothing pending any more.
func AlreadyDecided(as []*gate.Approval) string {
	var lines []string
	for _, a := range as {
		lines = append(lines, Outcome(a))
	}
	switch len(lines) {
	case 0:
		return "Already decided; nothing was changed."
	case 1:
		return "Already decided: " + lines[0]
	}
	return fmt.Sprintf("Already decided:\n%s", strings.Join(lines, "\n"))
}

package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// derivedKeyPrefix marks an idempotency key the gate derived from the call
// (none was given). Clients may not send keys with it.
const derivedKeyPrefix = "derived:"

// idempotencyKey returns the key a call is deduplicated by: the agent's
// own (Claude Code's tool_use_id), else one derived from session, cwd, tool
// and input, which only recognises a client re-posting the same call.
func idempotencyKey(c Call, digest string) string {
	if c.IdempotencyKey != "" {
		return c.IdempotencyKey
	}
	h := sha256.Sum256([]byte(c.SessionID + "\x00" + c.Cwd + "\x00" + digest))
	return derivedKeyPrefix + hex.EncodeToString(h[:16])
}

// derivedKey reports whether key was derived by the gate.
func derivedKey(key string) bool { return strings.HasPrefix(key, derivedKeyPrefix) }

// Reuse decides what a new call next does with the approval prev that its
// idempotency key (same agent, same key) already names. It is the whole
// rule of lifecycle point 7 and is called by Store.CreateApproval inside
// its write transaction, so the decision and the create are one step.
//
//   - A key is bound to its call: agent, session, tool, input digest and
//     cwd (relative paths are judged against the cwd). Another call under
//     the key is a conflict (an error wrapping ErrConflict): it never
//     receives prev's decision.
//   - An explicit key attaches to prev whatever its status: a client that
//     lost its connection, or a daemon that restarted, gets the same answer
//     and never a second prompt.
//   - A derived key attaches only to an approval that was pending when next
//     arrived (next.CreatedAt is its arrival): still pending, or decided at
//     or after that moment (a submit racing the decision). An identical call
//     made after the decision is a new call: "approve once" is once.
func Reuse(prev, next *Approval) (attach bool, err error) {
	if prev.SessionID != next.SessionID || prev.Tool != next.Tool || prev.Digest != next.Digest || prev.Cwd != next.Cwd {
		return false, fmt.Errorf("%w: idempotency key %q was first used for another call (approval %s, tool %s); a key names one call, use a new key for a new call",
			ErrConflict, clipKey(next.IdempotencyKey), prev.ID, clipKey(prev.Tool))
	}
	if !derivedKey(next.IdempotencyKey) || prev.Status == StatusPending {
		return true, nil
	}
	return prev.DecidedAt != nil && !prev.DecidedAt.Before(next.CreatedAt), nil
}

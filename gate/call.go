// Package gate is approvalbot's domain: tool calls, rules and their
// evaluation, and the approval lifecycle. It declares the small interfaces
// it needs from the outside (Store, Notifier) and imports only shell,
// gobwas/glob and the standard library.
package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Action is what a rule, or the gate as a whole, says about a call.
type Action string

// The three actions. The zero value is not an action.
const (
	Allow Action = "allow"
	Deny  Action = "deny"
	Ask   Action = "ask"
)

// Valid reports whether a is one of the three actions.
func (a Action) Valid() bool { return a == Allow || a == Deny || a == Ask }

// Stricter returns the stricter of a and b: deny over ask over allow.
// An invalid action counts as ask, so nothing unknown turns into an allow.
func Stricter(a, b Action) Action {
	if rank(a) >= rank(b) {
		return norm(a)
	}
	return norm(b)
}

func norm(a Action) Action {
	if !a.Valid() {
		return Ask
	}
	return a
}

func rank(a Action) int {
	switch a {
	case Allow:
		return 0
	case Deny:
		return 2
	default:
		return 1
	}
}

// Call is one tool call an agent wants to make.
type Call struct {
	Agent          string          `json:"agent"`
	SessionID      string          `json:"session_id,omitempty"`
	Tool           string          `json:"tool"`
	Input          json.RawMessage `json:"input,omitempty"`
	Cwd            string          `json:"cwd,omitempty"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	// Deferred marks a call whose agent run does not wait: it exits while
	// the call is pending and a person resumes it after deciding (Claude
	// Code's `defer`, `approvalbot hook claude --defer`). Prompts then say
	// how to resume.
	Deferred bool `json:"deferred,omitempty"`
	// Remote marks a call that came from another machine (or through a
	// proxy): the daemon's file system says nothing about the agent's, so
	// patterns are not listed on disk and paths are not resolved there.
	Remote bool `json:"-"`
}

// Digest is the hex SHA-256 of the call's canonical tool input: the input
// re-encoded with sorted object keys and no insignificant whitespace, so the
// same input always has the same digest however the agent spelled it.
// A decision is bound to the digest it was shown for.
func (c Call) Digest() (string, error) {
	canon, err := CanonicalJSON(c.Input)
	if err != nil {
		return "", fmt.Errorf("canonicalize input of %s: %w", c.Tool, err)
	}
	h := sha256.New()
	// The tool name is part of what was shown, so it is part of the digest.
	h.Write([]byte(c.Tool))
	h.Write([]byte{0})
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CanonicalJSON re-encodes raw with sorted keys (encoding/json sorts map
// keys) and numbers kept as written. Empty input is the empty object.
func CanonicalJSON(raw json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return json.Marshal(v)
}

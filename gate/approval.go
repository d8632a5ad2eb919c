package gate

import "time"

// Status is where a call stands. allowed/denied are answers given at once by
// the rules; the others belong to an approval a person was asked about.
type Status string

// Statuses, as the HTTP API spells them.
const (
	StatusAllowed        Status = "allowed"
	StatusDenied         Status = "denied"
	StatusPending        Status = "pending"
	StatusApproved       Status = "approved"
	StatusApprovedAlways Status = "approved_always"
	StatusDeniedStop     Status = "denied_stop"
	StatusExpired        Status = "expired"
	StatusCancelled      Status = "cancelled"
)

// Final reports whether s is a final status (everything but pending).
func (s Status) Final() bool { return s != StatusPending && s != "" }

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	switch s {
	case StatusAllowed, StatusDenied, StatusPending, StatusApproved, StatusApprovedAlways,
		StatusDeniedStop, StatusExpired, StatusCancelled:
		return true
	}
	return false
}

// Scope says how long an Always rule lasts.
type Scope string

// Scopes of an Always rule.
const (
	ScopeSession Scope = "session" // until the agent's session ends
	ScopeAgent   Scope = "agent"   // persistent, for every session of the agent
)

// MessageRef is where a frontend showed an approval, so it can edit it later
// (after a decision, an expiry, or a restart).
type MessageRef struct {
	Frontend  string    `json:"frontend"` // "telegram", "slack", ...
	ChatID    string    `json:"chat_id"`
	MessageID string    `json:"message_id"`
	SentAt    time.Time `json:"sent_at"`
	// Group is set when the message is a grouped view of the approval's
	// session (GroupNotifier); the gate keeps that message's state under it.
	Group string `json:"group,omitempty"`
}

// Approval is a call the gate asked a person about, or (with status
// allowed/denied) a call the rules answered at once.
type Approval struct {
	ID        string     `json:"id"`
	Status    Status     `json:"status"`
	Decision  Action     `json:"decision,omitempty"` // allow or deny once final; empty while pending
	Reason    string     `json:"reason,omitempty"`
	DecidedBy string     `json:"decided_by,omitempty"`
	Via       string     `json:"via,omitempty"` // the surface that decided: telegram, slack, cli, api, timeout, mode, rules
	DecidedAt *time.Time `json:"decided_at,omitempty"`

	Agent          string `json:"agent"`
	SessionID      string `json:"session_id,omitempty"`
	Tool           string `json:"tool"`
	Input          []byte `json:"input,omitempty"`
	Cwd            string `json:"cwd,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Digest         string `json:"digest"`
	// Deferred: see Call.Deferred.
	Deferred bool `json:"deferred,omitempty"`
	// Judged is the input as the gate decoded and judged it; frontends
	// render from it. Nil for approvals stored before it existed.
	Judged *Judged `json:"judged,omitempty"`

	Evaluation Evaluation   `json:"evaluation,omitzero"`
	CreatedAt  time.Time    `json:"created_at"`
	Deadline   time.Time    `json:"deadline"`
	Messages   []MessageRef `json:"messages,omitempty"`
}

// Call returns the tool call the approval is about.
func (a *Approval) Call() Call {
	return Call{Agent: a.Agent, SessionID: a.SessionID, Tool: a.Tool, Input: a.Input, Cwd: a.Cwd, IdempotencyKey: a.IdempotencyKey, Deferred: a.Deferred}
}

// AlwaysRule is an allow rule a person added with the Always button (or the
// rules API). It can turn an ask into an allow, never a deny into an allow.
type AlwaysRule struct {
	ID         string     `json:"id"`
	Agent      string     `json:"agent"`
	Tool       string     `json:"tool"`
	Pattern    string     `json:"pattern"`
	Scope      Scope      `json:"scope"`
	SessionID  string     `json:"session_id,omitempty"` // for ScopeSession
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	CreatedBy  string     `json:"created_by,omitempty"`
	ApprovalID string     `json:"approval_id,omitempty"` // the approval whose Always button made it
}

// Active reports whether the rule applies at now to the given session.
func (r AlwaysRule) Active(now time.Time, sessionID string) bool {
	if r.ExpiresAt != nil && !now.Before(*r.ExpiresAt) {
		return false
	}
	if r.Scope == ScopeSession && r.SessionID != sessionID {
		return false
	}
	return true
}

// AuditEntry is one line of the hash-chained audit log. The store assigns
// Seq, PrevHash and Hash.
type AuditEntry struct {
	Seq        uint64    `json:"seq"`
	Time       time.Time `json:"time"`
	Event      string    `json:"event"` // "evaluated", "decided", "expired", "rule_added", "rule_removed", "mode"
	ApprovalID string    `json:"approval_id,omitempty"`
	Agent      string    `json:"agent,omitempty"`
	Tool       string    `json:"tool,omitempty"`
	Digest     string    `json:"digest,omitempty"`
	Status     Status    `json:"status,omitempty"`
	Decision   Action    `json:"decision,omitempty"`
	By         string    `json:"by,omitempty"`
	Detail     string    `json:"detail,omitempty"`
	PrevHash   string    `json:"prev_hash"`
	Hash       string    `json:"hash"`
}

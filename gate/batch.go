package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Batches (DESIGN.md, Frontends, "Batches"): when one agent session has
// several calls pending, a frontend shows them in one grouped view with
// "Approve all N" / "Deny all". A press must decide exactly the calls the
// view showed when it was rendered, never one that arrived later, so every
// rendering of a grouped view gets a Batch: an immutable record of its
// members (ids and digests), kept in the store under a short id that fits
// a Telegram button. A later call makes a new Batch; the old one still
// decides only its own members.

// MaxBatch is the most calls one grouped view lists: every call is shown
// in full, and a chat message has room for about this many. A session's
// further pending calls get prompts of their own.
const MaxBatch = 8

// keyBatchPrefix + batch id is where a Batch is kept in the value store.
const keyBatchPrefix = "gate.batch."

// BatchMember is one call a batch decides: its approval id and the digest
// of the call input it was shown with (a prefix of 8+ hex digits is
// accepted, as for Decision.Digest).
type BatchMember struct {
	ID     string `json:"id"`
	Digest string `json:"digest"`
}

// Batch is the set of calls one rendering of a grouped view covers.
type Batch struct {
	ID        string        `json:"id"`
	Agent     string        `json:"agent"`
	SessionID string        `json:"session_id"`
	Members   []BatchMember `json:"members"`
	CreatedAt time.Time     `json:"created_at"`
}

// Digest is a short hash of the batch's members (ids and digests, in
// order), which buttons carry beside the batch id.
func (b *Batch) Digest() string {
	h := sha256.New()
	for _, m := range b.Members {
		h.Write([]byte(m.ID + ":" + m.Digest + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Batch outcomes per call, as BatchResult.Result says them.
const (
	BatchDecided        = "decided"
	BatchAlreadyDecided = "already_decided"
	BatchDigestMismatch = "digest_mismatch"
	BatchNotFound       = "not_found"
	BatchFailed         = "failed"
)

// BatchResult is what a batch decision did to one call. Each call is
// decided whole or not at all, on its own: one call decided elsewhere
// first never stops the others.
type BatchResult struct {
	ID       string    `json:"id"`
	Result   string    `json:"result"`             // BatchDecided, BatchAlreadyDecided, ...
	Approval *Approval `json:"approval,omitempty"` // as it now is (nil when not found)
	Error    string    `json:"error,omitempty"`
}

// saveBatch stores a new batch of members and returns it.
func (g *Gate) saveBatch(ctx context.Context, agent, session string, members []BatchMember) (*Batch, error) {
	b := &Batch{ID: newID(), Agent: agent, SessionID: session, Members: members, CreatedAt: g.now()}
	raw, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	if err := g.store.PutValue(ctx, keyBatchPrefix+b.ID, string(raw)); err != nil {
		return nil, fmt.Errorf("store batch: %w", err)
	}
	return b, nil
}

// Batch returns the batch with id, or ErrNotFound (unknown, or pruned
// once every call in it was final).
func (g *Gate) Batch(ctx context.Context, id string) (*Batch, error) {
	if id == "" || len(id) > maxIDLen || strings.ContainsAny(id, ". ") {
		return nil, fmt.Errorf("%w: bad batch id", ErrInvalid)
	}
	raw, err := g.store.GetValue(ctx, keyBatchPrefix+id)
	if err != nil {
		return nil, fmt.Errorf("get batch %s: %w", id, err)
	}
	var b Batch
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		return nil, fmt.Errorf("decode batch %s: %w", id, err)
	}
	return &b, nil
}

func (g *Gate) forgetBatch(ctx context.Context, id string) {
	if err := g.store.PutValue(ctx, keyBatchPrefix+id, ""); err != nil {
		g.logger.Warn("prune batch", "batch", id, "err", err)
	}
}

// DecideBatch applies d to every call of batch id, which a grouped view
// showed with the batch digest digest (a prefix of 8+ digits). It decides
// exactly the batch's members, each bound to its digest; see DecideMany.
// ErrNotFound for an unknown batch, ErrDigestMismatch for another digest.
func (g *Gate) DecideBatch(ctx context.Context, id, digest string, d Decision) ([]BatchResult, error) {
	b, err := g.Batch(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(digest) < 8 || !strings.HasPrefix(b.Digest(), digest) {
		return nil, fmt.Errorf("batch %s: %w", id, ErrDigestMismatch)
	}
	return g.DecideMany(ctx, b.Members, d)
}

// DecideMany applies one decision to each call in members, in order, each
// only for the digest it names (required: a batch decides what a person
// saw). Each call is decided whole or not at all, on its own; the results
// say, per call, what happened. Always is refused (its patterns are per
// call: decide those one by one). An error is returned only for a bad
// request, before anything is decided; ErrUnauthorized is the caller's
// job, as for Decide.
func (g *Gate) DecideMany(ctx context.Context, members []BatchMember, d Decision) ([]BatchResult, error) {
	switch {
	case len(members) == 0:
		return nil, fmt.Errorf("%w: no calls to decide", ErrInvalid)
	case len(members) > maxBatchRequest:
		return nil, fmt.Errorf("%w: at most %d calls in one batch", ErrInvalid, maxBatchRequest)
	case d.Always:
		return nil, fmt.Errorf("%w: Always is per call; approve the batch once, or each call with Always", ErrInvalid)
	}
	seen := map[string]bool{}
	for _, m := range members {
		if err := validID(m.ID); err != nil {
			return nil, err
		}
		if len(m.Digest) < 8 {
			return nil, fmt.Errorf("%w: call %s needs the digest it was shown with", ErrInvalid, m.ID)
		}
		if seen[m.ID] {
			return nil, fmt.Errorf("%w: call %s listed twice", ErrInvalid, m.ID)
		}
		seen[m.ID] = true
	}
	out := make([]BatchResult, 0, len(members))
	for _, m := range members {
		dm := d
		dm.Digest = m.Digest
		a, err := g.Decide(ctx, m.ID, dm)
		r := BatchResult{ID: m.ID, Approval: a, Result: BatchDecided}
		switch {
		case err == nil:
		case errors.Is(err, ErrAlreadyDecided):
			r.Result = BatchAlreadyDecided
		case errors.Is(err, ErrDigestMismatch):
			r.Result, r.Error = BatchDigestMismatch, err.Error()
		case errors.Is(err, ErrNotFound):
			r.Result, r.Error = BatchNotFound, err.Error()
		case errors.Is(err, ErrInvalid) && r.Approval == nil:
			return out, err // a bad decision: the same for every call
		default:
			r.Result, r.Error = BatchFailed, err.Error()
		}
		out = append(out, r)
	}
	return out, nil
}

// maxBatchRequest bounds the calls one DecideMany may name.
const maxBatchRequest = 1000

// SessionPending returns the pending approvals of an agent's session,
// oldest first.
func (g *Gate) SessionPending(ctx context.Context, agent, session string) ([]*Approval, error) {
	all, err := g.store.ListApprovals(ctx, StatusPending)
	if err != nil {
		return nil, fmt.Errorf("list pending: %w", err)
	}
	var out []*Approval
	for _, a := range all {
		if a.Agent == agent && a.SessionID == session {
			out = append(out, a)
		}
	}
	return out, nil
}

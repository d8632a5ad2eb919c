package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"approvalbot/gate"
)

// approvalJSON is an approval as the API spells it: gate.Approval's fields,
// with the tool input as a JSON value (gate.Approval.Input is []byte, which
// encoding/json would write as base64) and the rules that decided.
type approvalJSON struct {
	*gate.Approval
	// Input shadows gate.Approval.Input (a shallower field wins in encoding/json).
	Input json.RawMessage `json:"input,omitempty"`
	// Rules are the rules behind the evaluation's decision.
	Rules []gate.RuleRef `json:"rules"`
}

func toJSON(a *gate.Approval) *approvalJSON {
	if a == nil {
		return nil
	}
	out := &approvalJSON{Approval: a, Rules: decidingRules(a.Evaluation)}
	switch {
	case len(bytes.TrimSpace(a.Input)) == 0:
	case json.Valid(a.Input):
		out.Input = a.Input
	default:
		// Never the case for input the API decoded; kept safe for any other path.
		s, _ := json.Marshal(string(a.Input))
		out.Input = s
	}
	return out
}

// submitAnswer is the answer to POST /v1/calls for a call the rules
// answered at once (DESIGN: id, status, decision, reason, decided_by,
// rules; what was judged too): not the input the caller just sent, the
// whole evaluation or message references. Every allowed call takes this
// path, so it is a flat struct of the fields it carries. A pending answer
// is the whole approval (toJSON); GET /v1/approvals/{id} always is.
type submitAnswer struct {
	ID             string         `json:"id"`
	Status         gate.Status    `json:"status"`
	Decision       gate.Action    `json:"decision,omitempty"`
	Reason         string         `json:"reason,omitempty"`
	DecidedBy      string         `json:"decided_by,omitempty"`
	Via            string         `json:"via,omitempty"`
	DecidedAt      *time.Time     `json:"decided_at,omitempty"`
	Agent          string         `json:"agent"`
	SessionID      string         `json:"session_id,omitempty"`
	Tool           string         `json:"tool"`
	Cwd            string         `json:"cwd,omitempty"`
	IdempotencyKey string         `json:"idempotency_key,omitempty"`
	Digest         string         `json:"digest"`
	Judged         *gate.Judged   `json:"judged,omitempty"`
	Rules          []gate.RuleRef `json:"rules"`
}

// toSubmitJSON is the answer to POST /v1/calls.
func toSubmitJSON(a *gate.Approval) any {
	if a == nil || !a.Status.Final() {
		return toJSON(a)
	}
	return &submitAnswer{ID: a.ID, Status: a.Status, Decision: a.Decision, Reason: a.Reason, DecidedBy: a.DecidedBy,
		Via: a.Via, DecidedAt: a.DecidedAt, Agent: a.Agent, SessionID: a.SessionID, Tool: a.Tool, Cwd: a.Cwd,
		IdempotencyKey: a.IdempotencyKey, Digest: a.Digest, Judged: a.Judged, Rules: decidingRules(a.Evaluation)}
}

// fromJSON turns a decoded approvalJSON back into a gate.Approval.
func (j *approvalJSON) approval() *gate.Approval {
	if j == nil || j.Approval == nil {
		return nil
	}
	a := *j.Approval
	if len(j.Input) > 0 && !bytes.Equal(j.Input, []byte("null")) {
		a.Input = append([]byte(nil), j.Input...)
	}
	return &a
}

// decidingRules returns the rules of the verdicts that made the evaluation's
// decision (for a deny, the denying ones; for an ask, the asking ones; for an
// allow, every allowing one), else the evaluation's own rule. Never nil.
func decidingRules(ev gate.Evaluation) []gate.RuleRef {
	refs := []gate.RuleRef{}
	seen := map[gate.RuleRef]bool{}
	add := func(r *gate.RuleRef) {
		if r != nil && !seen[*r] {
			seen[*r] = true
			refs = append(refs, *r)
		}
	}
	for _, v := range ev.Commands {
		if v.Decision == ev.Decision {
			add(v.Rule)
		}
	}
	if len(refs) == 0 {
		add(ev.Rule)
	}
	return refs
}

// callRequest is the body of POST /v1/calls.
type callRequest struct {
	Agent          string          `json:"agent"`
	SessionID      string          `json:"session_id"`
	Tool           string          `json:"tool"`
	Input          json.RawMessage `json:"input"`
	Cwd            string          `json:"cwd"`
	IdempotencyKey string          `json:"idempotency_key"`
	Deferred       bool            `json:"deferred"`
}

// approveRequest is the body of POST /v1/approvals/{id}/approve.
type approveRequest struct {
	Always    bool       `json:"always"`
	Scope     gate.Scope `json:"scope,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	By        string     `json:"by,omitempty"`
	Via       string     `json:"via,omitempty"`
	Digest    string     `json:"digest,omitempty"`
}

// denyRequest is the body of POST /v1/approvals/{id}/deny.
type denyRequest struct {
	Reason string `json:"reason,omitempty"`
	Stop   bool   `json:"stop,omitempty"`
	By     string `json:"by,omitempty"`
	Via    string `json:"via,omitempty"`
	Digest string `json:"digest,omitempty"`
}

// cancelRequest is the body of POST /v1/approvals/{id}/cancel.
type cancelRequest struct {
	Reason string `json:"reason,omitempty"`
}

// ruleRequest is the body of POST /v1/rules: an Always rule without the
// fields the server assigns (id, created_at, created_by).
type ruleRequest struct {
	Agent     string     `json:"agent"`
	Tool      string     `json:"tool"`
	Pattern   string     `json:"pattern"`
	Scope     gate.Scope `json:"scope,omitempty"`
	SessionID string     `json:"session_id,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// modeBody is the body of GET and PUT /v1/agents/{agent}/mode.
type modeBody struct {
	Agent string    `json:"agent,omitempty"`
	Mode  gate.Mode `json:"mode"`
}

type approvalsBody struct {
	Approvals  []*approvalJSON `json:"approvals"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

type rulesBody struct {
	Rules []gate.AlwaysRule `json:"rules"`
}

type auditBody struct {
	Entries []gate.AuditEntry `json:"entries"`
}

type verifyBody struct {
	OK      bool   `json:"ok"`
	Entries int    `json:"entries"`
	Error   string `json:"error,omitempty"`
}

// decodeBody reads exactly one JSON value of at most max bytes into dst,
// rejecting unknown fields. An empty body decodes as {} when emptyOK. Bodies
// must be sent as application/json: a browser cannot send that cross-site
// without a CORS preflight, which this server never grants.
func decodeBody(w http.ResponseWriter, r *http.Request, max int64, dst any, emptyOK bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" || !emptyOK || r.ContentLength > 0 {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return &httpError{http.StatusUnsupportedMediaType, codeUnsupported, "Content-Type must be application/json"}
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, max)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return err
		case errors.Is(err, io.EOF):
			if emptyOK {
				return nil
			}
			return badRequest("empty request body")
		}
		return badRequest("bad JSON body: %s", jsonErrText(err))
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("bad JSON body: more than one JSON value")
	}
	return nil
}

// jsonErrText keeps decoder errors short and free of the body's content.
func jsonErrText(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("field %q: want %s", te.Field, te.Type)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of body"
	}
	return err.Error() // e.g. `json: unknown field "x"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

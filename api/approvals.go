package api

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"approvalbot/gate"
)

// validVia reports whether a client may name via as the surface of its
// decision: a lower-case letter, then up to 31 of [a-z0-9_-]. (A function,
// not a regexp: compiling one costs every hook process at start-up.)
func validVia(via string) bool {
	if via == "" || len(via) > 32 || via[0] < 'a' || via[0] > 'z' {
		return false
	}
	for i := 1; i < len(via); i++ {
		c := via[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// handleSubmit is POST /v1/calls?wait=.
func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request, p principal) error {
	wait, err := s.waitParam(r)
	if err != nil {
		return err
	}
	var req callRequest
	if err := decodeBody(w, r, s.maxBody, &req, false); err != nil {
		return err
	}
	input := bytes.TrimSpace(req.Input)
	if bytes.Equal(input, []byte("null")) {
		input = nil
	}
	if len(input) > 0 && input[0] != '{' {
		return badRequest("input must be a JSON object")
	}
	call := gate.Call{
		Agent:          req.Agent,
		SessionID:      req.SessionID,
		Tool:           req.Tool,
		Input:          input,
		Cwd:            req.Cwd,
		IdempotencyKey: req.IdempotencyKey,
		Deferred:       req.Deferred,
		Remote:         !direct(r),
	}
	if !p.admin && !p.local {
		// The token says who the agent is; a body cannot speak for another.
		call.Agent = p.name
	}
	a, err := s.svc.Submit(r.Context(), call)
	if err != nil {
		return err
	}
	s.metrics.callAnswered(a)
	if a, err = s.waitFinal(w, r, a, wait); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toSubmitJSON(a))
	return nil
}

// handleList is GET /v1/approvals?status=&agent=&limit=&cursor=: one page,
// filtered in the store (an agent token sees only its own agent's), with
// next_cursor while more remain. Pages are bounded in count and bytes, and
// at most maxConcurrentLists are read at once, so listing costs the same
// whatever the store holds.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request, p principal) error {
	qv := r.URL.Query()
	q := gate.ListQuery{Status: gate.Status(qv.Get("status")), Agent: qv.Get("agent"), Limit: gate.DefaultPageSize}
	if q.Status != "" && !q.Status.Valid() {
		return badRequest("unknown status %q", q.Status)
	}
	if !p.admin {
		q.Agent = p.name // the token says whose approvals these are
	}
	if v := qv.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return badRequest("bad limit %q: want a positive number (at most %d)", v, gate.MaxPageSize)
		}
		q.Limit = min(n, gate.MaxPageSize)
	}
	if v := qv.Get("cursor"); v != "" {
		after, err := parseCursor(v)
		if err != nil {
			return err
		}
		q.After = after
	}
	select {
	case s.lists <- struct{}{}:
		defer func() { <-s.lists }()
	case <-r.Context().Done():
		return nil
	}
	page, err := s.svc.ListPage(r.Context(), q)
	if err != nil {
		return err
	}
	body := approvalsBody{Approvals: make([]*approvalJSON, 0, len(page.Approvals))}
	for _, a := range page.Approvals {
		if p.admin || a.Agent == p.name {
			body.Approvals = append(body.Approvals, toJSON(a))
		}
	}
	if page.Next != 0 {
		body.NextCursor = formatCursor(page.Next)
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// maxConcurrentLists bounds list pages read and encoded at once.
const maxConcurrentLists = 4

// Cursors are opaque to clients: "c" and the position in base 36.
func formatCursor(after uint64) string { return "c" + strconv.FormatUint(after, 36) }

func parseCursor(v string) (uint64, error) {
	rest, ok := strings.CutPrefix(v, "c")
	n, err := strconv.ParseUint(rest, 36, 64)
	if !ok || err != nil {
		return 0, badRequest("bad cursor %q: pass next_cursor back as it came", v)
	}
	return n, nil
}

// own returns the approval with id if p may see it. Another agent's approval
// is "not found" to an agent token, so ids cannot be probed. A local caller
// without a token has no name: it reaches an approval by the id it was
// given (80 random bits), and cannot list ids.
func (s *Server) own(r *http.Request, p principal, id string) (*gate.Approval, error) {
	a, err := s.svc.Get(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if !p.admin && !p.local && a.Agent != p.name {
		return nil, &httpError{http.StatusNotFound, codeNotFound, "not found"}
	}
	return a, nil
}

// handleGet is GET /v1/approvals/{id}?wait=.
func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, p principal) error {
	wait, err := s.waitParam(r)
	if err != nil {
		return err
	}
	a, err := s.own(r, p, r.PathValue("id"))
	if err != nil {
		return err
	}
	if a, err = s.waitFinal(w, r, a, wait); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toJSON(a))
	return nil
}

// maxClaimedBy bounds the name a client claims, shown beside the token's.
const maxClaimedBy = 60

// decidedBy names the approver of an API decision: the admin token's name,
// which is what counts, followed by the name the client claims (the CLI
// sends $USER@host) as detail when it differs.
func decidedBy(p principal, claimed string) string {
	claimed = strings.TrimSpace(claimed)
	if claimed == "" || claimed == p.name {
		return p.name
	}
	if len(claimed) > maxClaimedBy {
		claimed = strings.ToValidUTF8(claimed[:maxClaimedBy], "") + "..."
	}
	return p.name + " (" + claimed + ")"
}

func checkVia(via string) (string, error) {
	if via == "" {
		return "api", nil
	}
	if !validVia(via) {
		return "", badRequest("bad via %q: want a lowercase word", via)
	}
	return via, nil
}

// handleApprove is POST /v1/approvals/{id}/approve.
func (s *Server) handleApprove(w http.ResponseWriter, r *http.Request, p principal) error {
	var req approveRequest
	if err := decodeBody(w, r, s.maxBody, &req, true); err != nil {
		return err
	}
	switch req.Scope {
	case "", gate.ScopeAgent, gate.ScopeSession:
	default:
		return badRequest("bad scope %q: want agent or session", req.Scope)
	}
	if (req.Scope != "" || req.ExpiresAt != nil) && !req.Always {
		return badRequest("scope and expires_at only go with always")
	}
	via, err := checkVia(req.Via)
	if err != nil {
		return err
	}
	return s.decide(w, r, gate.Decision{
		Approve: true, Always: req.Always, Scope: req.Scope, ExpiresAt: req.ExpiresAt,
		By: decidedBy(p, req.By), Via: via, Digest: req.Digest,
	})
}

// handleDeny is POST /v1/approvals/{id}/deny.
func (s *Server) handleDeny(w http.ResponseWriter, r *http.Request, p principal) error {
	var req denyRequest
	if err := decodeBody(w, r, s.maxBody, &req, true); err != nil {
		return err
	}
	via, err := checkVia(req.Via)
	if err != nil {
		return err
	}
	return s.decide(w, r, gate.Decision{
		Stop: req.Stop, Reason: req.Reason, By: decidedBy(p, req.By), Via: via, Digest: req.Digest,
	})
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request, d gate.Decision) error {
	a, err := s.svc.Decide(r.Context(), r.PathValue("id"), d)
	if err != nil {
		if errors.Is(err, gate.ErrAlreadyDecided) {
			return &approvalError{err: err, a: a}
		}
		return err
	}
	writeJSON(w, http.StatusOK, toJSON(a))
	return nil
}

// handleCancel is POST /v1/approvals/{id}/cancel.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request, p principal) error {
	var req cancelRequest
	if err := decodeBody(w, r, s.maxBody, &req, true); err != nil {
		return err
	}
	id := r.PathValue("id")
	if _, err := s.own(r, p, id); err != nil {
		return err
	}
	a, err := s.svc.Cancel(r.Context(), id, req.Reason)
	if err != nil {
		if errors.Is(err, gate.ErrAlreadyDecided) {
			return &approvalError{err: err, a: a}
		}
		return err
	}
	writeJSON(w, http.StatusOK, toJSON(a))
	return nil
}

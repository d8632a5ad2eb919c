package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// sessionBody answers GET /ui/api/session. The CSRF token is readable
// only by a script of this origin (no CORS), which then sends it back in
// the X-CSRF-Token header of every state change.
type sessionBody struct {
	SignedIn bool      `json:"signed_in"`
	Approver string    `json:"approver,omitempty"`
	CSRF     string    `json:"csrf,omitempty"`
	Expires  time.Time `json:"expires_at,omitzero"`
	Now      time.Time `json:"now"`
}

func (h *Handler) handleSession(w http.ResponseWriter, r *http.Request) {
	body := sessionBody{Now: h.now()}
	if s, err := h.auth.session(sessionID(r)); err == nil {
		body.SignedIn, body.Approver, body.CSRF, body.Expires = true, s.approver, s.csrf, s.expires
	}
	writeJSON(w, http.StatusOK, body)
}

// handleLogin is POST /ui/api/login {"token": "..."}: sign in with an
// approver credential.
func (h *Handler) handleLogin(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Token string `json:"token"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	id, s, err := h.auth.login(strings.TrimSpace(req.Token))
	switch {
	case errors.Is(err, errTooMany):
		writeError(w, http.StatusTooManyRequests, err.Error())
		return
	case err != nil:
		h.logger.Warn("web: sign-in with an unknown credential", "remote", r.RemoteAddr)
		writeError(w, http.StatusUnauthorized, "that is not an approver credential")
		return
	}
	h.logger.Info("web: signed in", "approver", s.approver, "with", "credential", "remote", r.RemoteAddr)
	h.setSession(w, r, id, s)
	writeJSON(w, http.StatusOK, sessionBody{SignedIn: true, Approver: s.approver, CSRF: s.csrf, Expires: s.expires, Now: h.now()})
}

// handleRedeem is POST /ui/api/redeem {"code": "..."}: sign in with a
// one-time link's code (the page reads it from the link's #fragment, which
// is never sent to a server or kept in a Referer).
func (h *Handler) handleRedeem(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Code string `json:"code"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	id, s, err := h.auth.redeem(req.Code)
	if err != nil {
		h.logger.Warn("web: an unknown, used or expired sign-in link", "remote", r.RemoteAddr)
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	h.logger.Info("web: signed in", "approver", s.approver, "with", "link", "remote", r.RemoteAddr)
	h.setSession(w, r, id, s)
	writeJSON(w, http.StatusOK, sessionBody{SignedIn: true, Approver: s.approver, CSRF: s.csrf, Expires: s.expires, Now: h.now()})
}

func (h *Handler) handleLogout(w http.ResponseWriter, r *http.Request, s *session) {
	h.auth.logout(sessionID(r))
	h.clearSession(w, r)
	writeJSON(w, http.StatusOK, sessionBody{Now: h.now()})
}

// LinkBody answers POST /ui/api/links.
type LinkBody struct {
	URL      string    `json:"url"`
	Approver string    `json:"approver"`
	Expires  time.Time `json:"expires_at"`
}

// handleNewLink is POST /ui/api/links with an approver's bearer token
// (`approvalbot ui-link`): a one-time sign-in link for that approver.
func (h *Handler) handleNewLink(w http.ResponseWriter, r *http.Request) {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	name, ok := "", false
	if strings.EqualFold(scheme, "Bearer") {
		name, ok = h.auth.approver(strings.TrimSpace(tok))
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="approvalbot"`)
		writeError(w, http.StatusUnauthorized, "a sign-in link needs the approver credential")
		return
	}
	base := "http://" + r.Host
	if r.TLS != nil {
		base = "https://" + r.Host
	}
	link, err := h.NewLink(name, base)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, link)
}

// NewLink makes a one-time sign-in link for approver: it works once, for
// LinkTTL. The link is on the public URL if one is set, else on base
// (such as "http://127.0.0.1:8754"). The code is in the URL's fragment.
func (h *Handler) NewLink(approver, base string) (LinkBody, error) {
	code, exp, err := h.auth.newLink(approver)
	if err != nil {
		return LinkBody{}, err
	}
	if h.publicURL != "" {
		base = h.publicURL
	}
	h.logger.Info("web: made a one-time sign-in link", "approver", approver, "expires", exp)
	return LinkBody{URL: strings.TrimRight(base, "/") + Prefix + "#link=" + code, Approver: approver, Expires: exp}, nil
}

// handleEvents is GET /ui/api/events: Server-Sent Events for the page.
// "hello" first (the approver and the server's clock, and the page drops
// what it showed), then "approval" for every pending approval (the gate's
// replay) and every change, as approvalView. The stream ends at sign-out;
// the page reconnects after a drop and gets a fresh replay.
func (h *Handler) handleEvents(w http.ResponseWriter, r *http.Request, s *session) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream; dead clients fail the heartbeat
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ch := h.gate.Subscribe(ctx)

	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var buf bytes.Buffer
	writeEvent(&buf, "hello", sessionBody{SignedIn: true, Approver: s.approver, Now: h.now()})
	tick := time.NewTicker(h.heartbeat)
	defer tick.Stop()
	id := sessionID(r)
	for {
		if buf.Len() > 0 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			buf.Reset()
			if err := rc.Flush(); err != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			writeEvent(&buf, "approval", viewOf(ev.Approval, h.now()))
		case <-tick.C:
			if _, err := h.auth.session(id); err != nil {
				return
			}
			buf.WriteString(": ping\n\n")
		}
	}
}

func writeEvent(buf *bytes.Buffer, typ string, v any) {
	data, _ := json.Marshal(v) // views marshal
	fmt.Fprintf(buf, "event: %s\ndata: %s\n\n", typ, data)
}

func (h *Handler) handleGet(w http.ResponseWriter, r *http.Request, s *session) {
	a, err := h.gate.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		h.writeGateError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewOf(a, h.now()))
}

// decideRequest is the body of POST /ui/api/approvals/{id}/decide.
type decideRequest struct {
	Choice prompt.ChoiceKind `json:"choice"` // approve, always, deny, deny_reason, stop
	Scope  gate.Scope        `json:"scope,omitempty"`
	// ScopeKey names one of prompt.AlwaysChoices (scope and expiry); it
	// takes the place of Scope.
	ScopeKey string `json:"scope_key,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Digest is the digest prefix of the call the page showed; required,
	// so a decision is only ever for the input the person saw.
	Digest string `json:"digest"`
}

func (h *Handler) handleDecide(w http.ResponseWriter, r *http.Request, s *session) {
	var req decideRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var expires *time.Time
	switch req.Choice {
	case prompt.ChoiceApprove, prompt.ChoiceDeny, prompt.ChoiceDenyReason, prompt.ChoiceStop:
	case prompt.ChoiceAlways:
		if req.ScopeKey != "" {
			sc, ok := prompt.ScopeChoiceOf(req.ScopeKey)
			if !ok {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown Always choice %q", req.ScopeKey))
				return
			}
			req.Scope, expires = sc.Scope, sc.ExpiresAt(h.now())
		}
		if req.Scope != gate.ScopeSession && req.Scope != gate.ScopeAgent {
			writeError(w, http.StatusBadRequest, "Always needs a scope: session or agent")
			return
		}
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown choice %q", req.Choice))
		return
	}
	if req.Digest == "" {
		writeError(w, http.StatusBadRequest, "digest is required: decide from the prompt you were shown")
		return
	}
	d := prompt.Decision(req.Choice, req.Scope, strings.TrimSpace(req.Reason))
	d.By, d.Via, d.Digest, d.ExpiresAt = s.approver, Via, req.Digest, expires
	a, err := h.gate.Decide(r.Context(), r.PathValue("id"), d)
	if err != nil {
		if errors.Is(err, gate.ErrAlreadyDecided) && a != nil {
			writeJSON(w, http.StatusConflict, map[string]any{"error": "already decided: " + prompt.Outcome(a), "approval": viewOf(a, h.now())})
			return
		}
		h.writeGateError(w, r, err)
		return
	}
	h.logger.Info("web: decided", "approval", a.ID, "status", a.Status, "approver", s.approver)
	writeJSON(w, http.StatusOK, viewOf(a, h.now()))
}

// batchRequest is the body of POST /ui/api/batch: "Approve all N" / "Deny
// all" for the calls of one session the page showed, each with the digest
// it showed. A call that arrived after the page drew the button is not in
// the list, so it is never decided by that press.
type batchRequest struct {
	Choice  prompt.ChoiceKind  `json:"choice"` // approve or deny
	Reason  string             `json:"reason,omitempty"`
	Members []gate.BatchMember `json:"members"`
}

// batchResultView is what a batch did to one call.
type batchResultView struct {
	ID       string        `json:"id"`
	Result   string        `json:"result"`
	Approval *approvalView `json:"approval,omitempty"`
}

func (h *Handler) handleBatch(w http.ResponseWriter, r *http.Request, s *session) {
	var req batchRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if req.Choice != prompt.ChoiceApprove && req.Choice != prompt.ChoiceDeny {
		writeError(w, http.StatusBadRequest, "a batch is approved or denied")
		return
	}
	if len(req.Members) > gate.MaxBatch {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("at most %d calls in one batch", gate.MaxBatch))
		return
	}
	d := prompt.Decision(req.Choice, "", strings.TrimSpace(req.Reason))
	d.By, d.Via = s.approver, Via
	res, err := h.gate.DecideMany(r.Context(), req.Members, d)
	if err != nil {
		h.writeGateError(w, r, err)
		return
	}
	now := h.now()
	out := struct {
		Results []batchResultView `json:"results"`
	}{Results: []batchResultView{}}
	for _, br := range res {
		v := batchResultView{ID: br.ID, Result: br.Result}
		if br.Approval != nil {
			v.Approval = viewOf(br.Approval, now)
		}
		out.Results = append(out.Results, v)
	}
	h.logger.Info("web: decided a batch", "calls", len(req.Members), "choice", req.Choice, "approver", s.approver)
	writeJSON(w, http.StatusOK, out)
}

// historyBody answers GET /ui/api/history?before=SEQ: audit entries,
// newest first; Before pages to older ones (0: no more).
type historyBody struct {
	Entries []auditView `json:"entries"`
	Before  uint64      `json:"before,omitempty"`
}

func (h *Handler) handleHistory(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	var before uint64
	if v := r.URL.Query().Get("before"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad before: want a sequence number")
			return
		}
		before = n
	}
	if before == 0 {
		last, err := h.lastAuditSeq(ctx)
		if err != nil {
			h.writeGateError(w, r, err)
			return
		}
		before = last + 1
	}
	after := uint64(0)
	if before > historyPage+1 {
		after = before - historyPage - 1
	}
	entries, err := h.gate.Audit(ctx, after, historyPage)
	if err != nil {
		h.writeGateError(w, r, err)
		return
	}
	now := h.now()
	approvals := map[string]*gate.Approval{}
	out := historyBody{Entries: []auditView{}}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Seq >= before {
			continue
		}
		a, seen := approvals[e.ApprovalID]
		if !seen && e.ApprovalID != "" {
			a, _ = h.gate.Get(ctx, e.ApprovalID) // gone after retention: no summary
			approvals[e.ApprovalID] = a
		}
		out.Entries = append(out.Entries, auditViewOf(e, a, now))
	}
	if after > 0 {
		out.Before = after + 1
	}
	writeJSON(w, http.StatusOK, out)
}

// lastAuditSeq finds the newest audit entry's sequence number (0: none)
// with the gate's forward-only Audit: doubling, then bisecting, on "is
// there an entry after n". Each probe is one ordered-key seek.
func (h *Handler) lastAuditSeq(ctx context.Context) (uint64, error) {
	exists := func(after uint64) (bool, error) {
		es, err := h.gate.Audit(ctx, after, 1)
		return len(es) > 0, err
	}
	lo, hi := uint64(0), uint64(1) // an entry after lo exists (unless lo is 0); none after hi is to be found
	for {
		ok, err := exists(hi - 1)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo = hi
		if hi > 1<<62 {
			break
		}
		hi *= 2
	}
	// The last entry's seq is in [lo, hi-1]: the largest n with an entry after n-1.
	for lo+1 < hi {
		mid := lo + (hi-lo)/2
		ok, err := exists(mid - 1)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

func (h *Handler) handleRules(w http.ResponseWriter, r *http.Request, s *session) {
	rules, err := h.gate.Rules(r.Context(), "")
	if err != nil {
		h.writeGateError(w, r, err)
		return
	}
	out := struct {
		Rules []ruleView `json:"rules"`
	}{Rules: []ruleView{}}
	for _, rl := range rules {
		out.Rules = append(out.Rules, ruleViewOf(rl))
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) handleRevoke(w http.ResponseWriter, r *http.Request, s *session) {
	if err := decodeJSON(w, r, &struct{}{}); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	rl, err := h.gate.RemoveRule(r.Context(), r.PathValue("id"), s.approver)
	if err != nil {
		h.writeGateError(w, r, err)
		return
	}
	h.logger.Info("web: revoked an Always rule", "rule", rl.ID, "approver", s.approver)
	writeJSON(w, http.StatusOK, ruleViewOf(rl))
}

// writeGateError maps the gate's errors to a status; the message of an
// unexpected error stays in the log.
func (h *Handler) writeGateError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, gate.ErrNotFound):
		writeError(w, http.StatusNotFound, "not found")
	case errors.Is(err, gate.ErrAlreadyDecided):
		writeError(w, http.StatusConflict, "already decided")
	case errors.Is(err, gate.ErrDigestMismatch):
		writeError(w, http.StatusConflict, "the call changed since this page showed it: reload")
	case errors.Is(err, gate.ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, io.ErrUnexpectedEOF):
		writeError(w, http.StatusServiceUnavailable, "request ended")
	default:
		h.logger.Error("web: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "internal error (see the daemon's log)")
	}
}

package api

import (
	"net/http"
	"strconv"

	"approvalbot/gate"
)

// handleRules is GET /v1/rules?agent=.
func (s *Server) handleRules(w http.ResponseWriter, r *http.Request, _ principal) error {
	rules, err := s.svc.Rules(r.Context(), r.URL.Query().Get("agent"))
	if err != nil {
		return err
	}
	if rules == nil {
		rules = []gate.AlwaysRule{}
	}
	writeJSON(w, http.StatusOK, rulesBody{Rules: rules})
	return nil
}

// handleAddRule is POST /v1/rules: an Always rule without id; 201 with the
// stored rule.
func (s *Server) handleAddRule(w http.ResponseWriter, r *http.Request, p principal) error {
	var req ruleRequest
	if err := decodeBody(w, r, s.maxBody, &req, false); err != nil {
		return err
	}
	if req.Agent == "" || req.Tool == "" || req.Pattern == "" {
		return badRequest("agent, tool and pattern are required")
	}
	switch req.Scope {
	case "":
		req.Scope = gate.ScopeAgent
	case gate.ScopeAgent:
	case gate.ScopeSession:
		if req.SessionID == "" {
			return badRequest("scope session needs a session_id")
		}
	default:
		return badRequest("bad scope %q: want agent or session", req.Scope)
	}
	rule, err := s.svc.AddRule(r.Context(), gate.AlwaysRule{
		Agent: req.Agent, Tool: req.Tool, Pattern: req.Pattern, Scope: req.Scope,
		SessionID: req.SessionID, ExpiresAt: req.ExpiresAt, CreatedBy: p.name,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, rule)
	return nil
}

// handleRemoveRule is DELETE /v1/rules/{id}; 200 with the removed rule.
func (s *Server) handleRemoveRule(w http.ResponseWriter, r *http.Request, p principal) error {
	rule, err := s.svc.RemoveRule(r.Context(), r.PathValue("id"), p.name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rule)
	return nil
}

// handleGetMode is GET /v1/agents/{agent}/mode.
func (s *Server) handleGetMode(w http.ResponseWriter, r *http.Request, _ principal) error {
	agent := r.PathValue("agent")
	m, err := s.svc.Mode(r.Context(), agent)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, modeBody{Agent: agent, Mode: m})
	return nil
}

// handleSetMode is PUT /v1/agents/{agent}/mode {"mode"}.
func (s *Server) handleSetMode(w http.ResponseWriter, r *http.Request, p principal) error {
	var req modeBody
	if err := decodeBody(w, r, s.maxBody, &req, false); err != nil {
		return err
	}
	agent := r.PathValue("agent")
	if req.Agent != "" && req.Agent != agent {
		return badRequest("agent in body %q differs from the path", req.Agent)
	}
	if !req.Mode.Valid() {
		return badRequest("bad mode %q: want interactive, strict or approve_all", req.Mode)
	}
	if err := s.svc.SetMode(r.Context(), agent, req.Mode, p.name); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, modeBody{Agent: agent, Mode: req.Mode})
	return nil
}

// handleAudit is GET /v1/audit?after=&limit= (limit default 1000, at most 10000).
func (s *Server) handleAudit(w http.ResponseWriter, r *http.Request, _ principal) error {
	q := r.URL.Query()
	var after uint64
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return badRequest("bad after %q: want a sequence number", v)
		}
		after = n
	}
	limit := defaultAuditPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return badRequest("bad limit %q: want a non-negative number", v)
		}
		if n > 0 {
			limit = min(n, maxAuditPage)
		}
	}
	entries, err := s.svc.Audit(r.Context(), after, limit)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = []gate.AuditEntry{}
	}
	writeJSON(w, http.StatusOK, auditBody{Entries: entries})
	return nil
}

// handleVerifyAudit is GET /v1/audit/verify: 200 {"ok","entries","error"};
// a broken chain is ok:false, not an HTTP error.
func (s *Server) handleVerifyAudit(w http.ResponseWriter, r *http.Request, _ principal) error {
	n, err := s.svc.VerifyAudit(r.Context())
	body := verifyBody{OK: err == nil, Entries: n}
	if err != nil {
		if status, _, _, _ := statusOf(err); status == http.StatusServiceUnavailable {
			return err
		}
		s.logger.Warn("api: audit chain check failed", "err", err)
		body.Error = err.Error()
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// handleBackup is GET /v1/backup: a consistent copy of the database file,
// streamed from one read transaction while the daemon goes on. An error
// after the first byte can only cut the stream short; the CLI checks the
// copy it receives (page structure and audit chain) before keeping it.
func (s *Server) handleBackup(w http.ResponseWriter, r *http.Request, p principal) error {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "no-store")
	n, err := s.svc.Backup(r.Context(), w)
	if err != nil && n == 0 {
		w.Header().Del("Content-Type")
		return err
	}
	if err != nil {
		s.logger.Error("api: backup cut short", "bytes", n, "err", err)
	} else {
		s.logger.Info("api: backup sent", "bytes", n, "by", p.name)
	}
	return nil
}

// handleHealth is GET /healthz: 200 when healthy, 503 otherwise, with the
// gate's Health as JSON either way.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request, _ principal) error {
	h := s.svc.Health(r.Context())
	status := http.StatusOK
	if !h.OK {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, h)
	return nil
}

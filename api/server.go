package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"approvalbot/gate"
)

// Server serves the HTTP API v1. It is an http.Handler; the caller owns the
// listener and the http.Server.
type Server struct {
	svc       Service
	logger    *slog.Logger
	metrics   *Metrics
	mux       *http.ServeMux
	creds     []credential
	open      bool
	maxBody   int64
	maxWait   time.Duration
	heartbeat time.Duration
	csrf      *http.CrossOriginProtection
	lists     chan struct{} // one token per list page being read
}

// NewServer returns the API server for svc.
//
// Authorization (see DESIGN.md, "The decision boundary"): deciding,
// rules, modes, the audit log and the event stream always need an admin
// (approver) token: 401 without one, 403 with an agent token. An agent
// token may POST /v1/calls (the agent is the token's; an "agent" in the
// body is ignored), list, read and cancel its own approvals (another
// agent's approval is 404 to it). With cfg.Open and no agent tokens, a
// request without a token that comes straight from this machine (see
// direct) may submit a call, wait on it and cancel it by id; it may not
// list approvals. /healthz and /metrics are public.
func NewServer(cfg Config, svc Service, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		svc:       svc,
		logger:    logger,
		metrics:   cfg.Metrics,
		mux:       http.NewServeMux(),
		creds:     credentials(cfg.AgentTokens, cfg.AdminTokens),
		maxBody:   cfg.MaxBody,
		maxWait:   cfg.MaxWait,
		heartbeat: cfg.Heartbeat,
		csrf:      http.NewCrossOriginProtection(),
		lists:     make(chan struct{}, maxConcurrentLists),
	}
	s.open = cfg.Open && len(cfg.AgentTokens) == 0
	if cfg.Open && !s.open {
		logger.Warn("api: agent tokens are configured, so calls without one are refused despite the open loopback setting")
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	if s.maxWait <= 0 {
		s.maxWait = DefaultMaxWait
	}
	if s.heartbeat <= 0 {
		s.heartbeat = DefaultHeartbeat
	}
	s.routes()
	return s
}

// Metrics returns the server's metrics, for frontends to report to and for
// serve to feed with Metrics.Consume.
func (s *Server) Metrics() *Metrics { return s.metrics }

func (s *Server) routes() {
	s.handle("POST /v1/calls", roleSubmit, s.handleSubmit)
	s.handle("GET /v1/approvals", roleAgent, s.handleList)
	s.handle("GET /v1/approvals/{id}", roleSubmit, s.handleGet)
	s.handle("POST /v1/approvals/batch", roleAdmin, s.handleBatch)
	s.handle("POST /v1/approvals/{id}/approve", roleAdmin, s.handleApprove)
	s.handle("POST /v1/approvals/{id}/deny", roleAdmin, s.handleDeny)
	s.handle("POST /v1/approvals/{id}/cancel", roleSubmit, s.handleCancel)
	s.handle("GET /v1/rules", roleAdmin, s.handleRules)
	s.handle("POST /v1/rules", roleAdmin, s.handleAddRule)
	s.handle("DELETE /v1/rules/{id}", roleAdmin, s.handleRemoveRule)
	s.handle("GET /v1/agents/{agent}/mode", roleAdmin, s.handleGetMode)
	s.handle("PUT /v1/agents/{agent}/mode", roleAdmin, s.handleSetMode)
	s.handle("GET /v1/audit", roleAdmin, s.handleAudit)
	s.handle("GET /v1/audit/verify", roleAdmin, s.handleVerifyAudit)
	s.handle("GET /v1/backup", roleAdmin, s.handleBackup)
	s.handle("GET /v1/events", roleAdmin, s.handleEvents)
	s.handle("GET /healthz", rolePublic, s.handleHealth)
	s.mux.Handle("GET /metrics", s.metrics.Handler())
}

// handlerFunc is an API handler; a returned error is written by writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p principal) error

func (s *Server) handle(pattern string, need role, h handlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		var p principal
		if need != rolePublic {
			var ok bool
			p, ok = s.authenticate(r)
			if ok && p.local && need != roleSubmit {
				ok = false // a token is what this route needs
			}
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="approvalbot"`)
				msg := "missing or unknown bearer token"
				if need == roleAdmin {
					msg = "this needs the approver credential: an APPROVALBOT_ADMIN_TOKENS token, or the one in the daemon's DATA_DIR/approver.token (the CLI reads it when APPROVALBOT_TOKEN is unset)"
				}
				s.writeError(w, r, &httpError{http.StatusUnauthorized, codeUnauthorized, msg})
				return
			}
			if need == roleAdmin && !p.admin {
				s.writeError(w, r, &httpError{http.StatusForbidden, codeForbidden, "an agent token may not do this: it needs the approver credential"})
				return
			}
		}
		if err := h(w, r, p); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w, r: r}
	defer func() { s.metrics.httpRequest(r.Pattern, sw.code()) }()
	if err := s.csrf.Check(r); err != nil {
		s.writeError(sw, r, &httpError{http.StatusForbidden, codeForbidden, "cross-origin request refused"})
		return
	}
	s.mux.ServeHTTP(sw, r)
}

// writeError writes err as {"error": ...} with the status statusOf maps it to.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code, msg, internal := statusOf(err)
	if internal {
		s.logger.Error("api: request failed", "method", r.Method, "route", r.Pattern, "err", err)
	}
	body := errorBody{Error: msg, Code: code}
	if status == http.StatusConflict && code == codeAlreadyDecided {
		body.Approval = toJSON(s.currentApproval(r, err))
	}
	writeJSON(w, status, body)
}

// approvalError carries the approval that came back with a gate error.
type approvalError struct {
	err error
	a   *gate.Approval
}

func (e *approvalError) Error() string { return e.err.Error() }
func (e *approvalError) Unwrap() error { return e.err }

// currentApproval finds the approval to show with an "already decided".
func (s *Server) currentApproval(r *http.Request, err error) *gate.Approval {
	var ae *approvalError
	if errors.As(err, &ae) && ae.a != nil {
		return ae.a
	}
	if id := r.PathValue("id"); id != "" {
		if a, gerr := s.svc.Get(r.Context(), id); gerr == nil {
			return a
		}
	}
	return nil
}

// waitParam parses ?wait= as a Go duration ("600s", "1m") or whole seconds
// ("600"), capped at MaxWait.
func (s *Server) waitParam(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("wait")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.ParseUint(v, 10, 32)
		if nerr != nil {
			return 0, badRequest("bad wait %q: want a duration such as 60s", v)
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 {
		return 0, badRequest("bad wait %q: negative", v)
	}
	return min(d, s.maxWait), nil
}

// waitFinal long-polls approval a until it is final, wait passes, or the
// client goes away; the approval stays pending in the last two cases.
func (s *Server) waitFinal(w http.ResponseWriter, r *http.Request, a *gate.Approval, wait time.Duration) (*gate.Approval, error) {
	if a.Status.Final() || wait <= 0 {
		return a, nil
	}
	// A server WriteTimeout shorter than the wait would cut the answer off.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + 30*time.Second))
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	got, err := s.svc.Wait(ctx, a.ID)
	if err != nil {
		if ctx.Err() != nil {
			return a, nil
		}
		return nil, err
	}
	if got == nil {
		return a, nil
	}
	return got, nil
}

// statusWriter records the status for metrics and turns the mux's own
// plain-text 404/405 answers into JSON errors.
type statusWriter struct {
	http.ResponseWriter
	r       *http.Request
	status  int
	swallow bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	if w.r.Pattern == "" && code >= 400 {
		// Unmatched route: the mux answered. Replace its text with JSON.
		w.swallow = true
		c := codeNotFound
		if code == http.StatusMethodNotAllowed {
			c = codeMethod
		}
		h := w.ResponseWriter.Header()
		h.Del("X-Content-Type-Options")
		writeJSON(w.ResponseWriter, code, errorBody{Error: http.StatusText(code), Code: c})
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.swallow {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush implements http.Flusher for code that asserts it directly.
func (w *statusWriter) Flush() { _ = w.FlushError() }

// FlushError is what http.ResponseController.Flush calls, so a broken
// connection is reported to the SSE loop.
func (w *statusWriter) FlushError() error {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

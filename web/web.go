// Package web serves the approval page at /ui on the daemon's listener: the
// pending approvals, live, with the same content and choices as the chat
// prompts (package prompt), a history from the audit log and the Always
// rules with revoke. Plain HTML, CSS and JavaScript embedded in the binary;
// no build step, nothing loaded from elsewhere.
//
// Only an approver decides (DESIGN.md, "The decision boundary"): a page
// signs in with an approver credential, or with a one-time link made for
// one approver (NewLink, `approvalbot ui-link`). The session is an HttpOnly,
// SameSite=Strict cookie (Secure over https); every state change also needs
// the session's CSRF token in a header, a JSON body and a same-origin
// request (http.CrossOriginProtection). The Content-Security-Policy allows
// scripts, styles and connections from the page's own origin only, and the
// script sets agent text with textContent, never as HTML.
package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"approvalbot/gate"
)

// Gate is what the page needs from the gate. *gate.Gate implements it; the
// contracts (errors, who may call) are documented on gate.Gate's methods.
type Gate interface {
	// Get returns one approval, or gate.ErrNotFound.
	Get(ctx context.Context, id string) (*gate.Approval, error)
	// Decide applies a person's decision; gate.ErrAlreadyDecided when
	// someone decided first, gate.ErrDigestMismatch for another input.
	Decide(ctx context.Context, id string, d gate.Decision) (*gate.Approval, error)
	// DecideMany applies one decision to each listed call, each bound to
	// the digest it was shown with, and reports per call.
	DecideMany(ctx context.Context, members []gate.BatchMember, d gate.Decision) ([]gate.BatchResult, error)
	// Rules lists Always rules of agent ("" for all).
	Rules(ctx context.Context, agent string) ([]gate.AlwaysRule, error)
	// RemoveRule deletes an Always rule, recording the approver by.
	RemoveRule(ctx context.Context, id, by string) (gate.AlwaysRule, error)
	// Subscribe streams events, the pending approvals first.
	Subscribe(ctx context.Context) <-chan gate.Event
	// Audit returns audit entries after seq, at most limit.
	Audit(ctx context.Context, after uint64, limit int) ([]gate.AuditEntry, error)
}

// Config holds the page's settings.
type Config struct {
	// Approvers are the approver credentials, token -> approver name (the
	// API's admin tokens). An empty map lets nobody sign in.
	Approvers map[string]string
	// PublicURL is the address people reach the daemon at
	// (APPROVALBOT_PUBLIC_URL), for links; "" uses the request's own address.
	PublicURL string
	// SessionTTL and LinkTTL default to DefaultSessionTTL and DefaultLinkTTL.
	SessionTTL time.Duration
	LinkTTL    time.Duration
	// Heartbeat is the event stream's keep-alive interval (default 15s).
	Heartbeat time.Duration
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
}

// Via is how decisions made on the page are recorded.
const Via = "web"

// Prefix is where the page is mounted.
const Prefix = "/ui/"

// Limits of the page's requests.
const (
	maxBody          = 16 << 10
	defaultHeartbeat = 15 * time.Second
	historyPage      = 50
)

// Names of the session cookie: with https the __Host- prefix pins it to
// this host and path / and makes the browser insist on Secure.
const (
	cookieName       = "approvalbot_session"
	secureCookieName = "__Host-approvalbot_session"
	csrfHeader       = "X-CSRF-Token"
)

// csp: everything from this origin only, no inline script or style, no
// framing, forms post nowhere else.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

//go:embed static
var staticFS embed.FS

// Handler serves the page and its JSON endpoints under Prefix.
type Handler struct {
	gate      Gate
	auth      *auth
	publicURL string
	heartbeat time.Duration
	now       func() time.Time
	logger    *slog.Logger
	mux       *http.ServeMux
	csrf      *http.CrossOriginProtection
	static    map[string]staticFile
}

// New returns the page's handler for g.
func New(cfg Config, g Gate, logger *slog.Logger) *Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.LinkTTL <= 0 {
		cfg.LinkTTL = DefaultLinkTTL
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = defaultHeartbeat
	}
	h := &Handler{
		gate:      g,
		auth:      newAuth(cfg.Approvers, cfg.SessionTTL, cfg.LinkTTL, cfg.Now),
		publicURL: strings.TrimRight(cfg.PublicURL, "/"),
		heartbeat: cfg.Heartbeat,
		now:       cfg.Now,
		logger:    logger,
		mux:       http.NewServeMux(),
		csrf:      http.NewCrossOriginProtection(),
		static:    loadStatic(),
	}
	h.routes()
	return h
}

func (h *Handler) routes() {
	h.mux.HandleFunc("GET /ui/{$}", h.serveIndex)
	h.mux.HandleFunc("GET /ui/static/{name}", h.serveStatic)
	h.mux.HandleFunc("GET /ui/api/session", h.handleSession)
	h.mux.HandleFunc("POST /ui/api/login", h.handleLogin)
	h.mux.HandleFunc("POST /ui/api/redeem", h.handleRedeem)
	h.mux.HandleFunc("POST /ui/api/logout", h.signedIn(h.handleLogout))
	h.mux.HandleFunc("POST /ui/api/links", h.handleNewLink)
	h.mux.HandleFunc("GET /ui/api/events", h.signedIn(h.handleEvents))
	h.mux.HandleFunc("GET /ui/api/approvals/{id}", h.signedIn(h.handleGet))
	h.mux.HandleFunc("POST /ui/api/approvals/{id}/decide", h.signedIn(h.handleDecide))
	h.mux.HandleFunc("POST /ui/api/batch", h.signedIn(h.handleBatch))
	h.mux.HandleFunc("GET /ui/api/history", h.signedIn(h.handleHistory))
	h.mux.HandleFunc("GET /ui/api/rules", h.signedIn(h.handleRules))
	h.mux.HandleFunc("POST /ui/api/rules/{id}/revoke", h.signedIn(h.handleRevoke))
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	// A forged cross-site POST (a form on another site, a fetch without
	// CORS) is refused here, before any handler, whatever cookie it carries.
	if err := h.csrf.Check(r); err != nil {
		writeError(w, http.StatusForbidden, "cross-origin request refused")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// sessionHandler is a handler for a signed-in page.
type sessionHandler func(w http.ResponseWriter, r *http.Request, s *session)

// signedIn checks the session cookie and, for a state change, the session's
// CSRF token and a JSON body.
func (h *Handler) signedIn(next sessionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := h.auth.session(sessionID(r))
		if err != nil {
			writeError(w, http.StatusUnauthorized, "not signed in")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !s.csrfOK(r.Header.Get(csrfHeader)) {
				writeError(w, http.StatusForbidden, "missing or wrong CSRF token: reload the page")
				return
			}
		}
		next(w, r, s)
	}
}

func sessionID(r *http.Request) string {
	for _, name := range [...]string{secureCookieName, cookieName} {
		if c, err := r.Cookie(name); err == nil && c.Value != "" {
			return c.Value
		}
	}
	return ""
}

// secure reports whether the page is reached over https: TLS on this
// listener, or a public https address (TLS ended at a proxy).
func (h *Handler) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(h.publicURL, "https://")
}

func (h *Handler) setSession(w http.ResponseWriter, r *http.Request, id string, s *session) {
	c := &http.Cookie{
		// MaxAge, not Expires: the browser's clock may differ from ours.
		Name: cookieName, Value: id, Path: "/ui/", MaxAge: int(s.expires.Sub(h.now()).Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
	}
	if h.secure(r) {
		c.Name, c.Path, c.Secure = secureCookieName, "/", true
	}
	http.SetCookie(w, c)
}

func (h *Handler) clearSession(w http.ResponseWriter, r *http.Request) {
	for _, c := range []*http.Cookie{
		{Name: cookieName, Path: "/ui/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode},
		{Name: secureCookieName, Path: "/", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode},
	} {
		if c.Secure && !h.secure(r) {
			continue
		}
		http.SetCookie(w, c)
	}
}

// decodeJSON reads a JSON body of at most maxBody bytes. Requiring
// application/json keeps out the simple cross-site requests (forms) that a
// browser sends without asking.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return errors.New("Content-Type must be application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil && !errors.Is(err, io.EOF) {
		return errors.New("bad JSON body")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

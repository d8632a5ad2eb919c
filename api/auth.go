package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
)

// role is what a route requires.
type role int

const (
	rolePublic role = iota // no token (healthz, metrics)
	roleAgent              // an agent or admin token; agents see only their own approvals
	roleAdmin              // an admin token
)

// principal is who a request speaks for.
type principal struct {
	name  string // the agent (agent token) or approver (admin token, "local" when open)
	admin bool
}

// localAdmin is the caller on an open loopback listener.
var localAdmin = principal{name: "local", admin: true}

// credential is a configured token, kept only as its SHA-256 so every
// comparison is between equal-length values.
type credential struct {
	hash [sha256.Size]byte
	who  principal
}

func credentials(agents, admins map[string]string) []credential {
	var out []credential
	for tok, name := range agents {
		out = append(out, credential{sha256.Sum256([]byte(tok)), principal{name: name}})
	}
	for tok, name := range admins {
		out = append(out, credential{sha256.Sum256([]byte(tok)), principal{name: name, admin: true}})
	}
	return out
}

// authenticate returns the request's principal. It compares the presented
// token against every configured one in constant time, without stopping at
// a match, so timing tells nothing about which tokens exist.
func (s *Server) authenticate(r *http.Request) (principal, bool) {
	if s.open {
		return localAdmin, true
	}
	auth := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return principal{}, false
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return principal{}, false
	}
	h := sha256.Sum256([]byte(tok))
	var found principal
	match := 0
	for _, c := range s.creds {
		eq := subtle.ConstantTimeCompare(h[:], c.hash[:])
		if eq == 1 {
			found = c.who
		}
		match |= eq
	}
	return found, match == 1
}

// hostAllowed guards an open listener against DNS rebinding: a web page on
// an attacker's domain that resolves to 127.0.0.1 sends its own Host.
func hostAllowed(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	return isLoopbackHost(host)
}

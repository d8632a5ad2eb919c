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
	roleSubmit             // any token, or none from a local caller on an open listener: submit, wait on and cancel a call by id
	roleAgent              // an agent or admin token; agents see only their own approvals
	roleAdmin              // an admin (approver) token, always: decide, rules, modes, audit, events
)

// principal is who a request speaks for.
type principal struct {
	name  string // the agent (agent token) or approver (admin token); "" for a local caller without a token
	admin bool
	local bool // no token: a local caller on an open listener, known only by the ids it was given
}

// localCaller is a caller without a token on an open loopback listener.
var localCaller = principal{local: true}

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

// authenticate returns the request's principal: the holder of the bearer
// token it presents, else, on an open listener, the local caller when the
// request came straight from this machine (see direct). It compares the
// presented token against every configured one in constant time, without
// stopping at a match, so timing tells nothing about which tokens exist. A
// wrong token is refused even where no token would do.
func (s *Server) authenticate(r *http.Request) (principal, bool) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		if s.open && direct(r) {
			return localCaller, true
		}
		return principal{}, false
	}
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

// proxyHeaders mark a request relayed by a proxy, whose real origin the
// loopback peer address hides.
var proxyHeaders = []string{"Forwarded", "X-Real-Ip", "X-Client-Ip", "True-Client-Ip", "Cf-Connecting-Ip"}

// direct reports whether a request without a token may count as coming
// from this machine: a loopback peer, a loopback Host (a web page on an
// attacker's domain that resolves to 127.0.0.1 sends its own Host: DNS
// rebinding), and no sign of a proxy (Forwarded, X-Forwarded-*, X-Real-IP
// and kin), since a reverse proxy on this machine makes every request's
// peer loopback.
func direct(r *http.Request) bool {
	for k := range r.Header {
		if strings.HasPrefix(k, "X-Forwarded-") {
			return false
		}
	}
	for _, k := range proxyHeaders {
		if _, ok := r.Header[k]; ok {
			return false
		}
	}
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	peer, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(peer)
	return isLoopbackHost(host) && ip != nil && ip.IsLoopback()
}

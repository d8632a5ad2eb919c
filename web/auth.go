package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"sync"
	"time"
)

// Defaults for Config fields left zero.
const (
	// DefaultSessionTTL is how long a sign-in lasts: a phone used for
	// approvals should not need the link again every day. Sessions live in
	// the daemon's memory, so a restart signs every page out.
	DefaultSessionTTL = 7 * 24 * time.Hour
	// DefaultLinkTTL is how long a one-time sign-in link works: long
	// enough to pick up a phone and scan it, short enough that a link left
	// in a log or a terminal scrollback is dead by the time anyone finds it.
	DefaultLinkTTL = 10 * time.Minute
)

// Limits on what sign-in may keep in memory.
const (
	maxSessions = 1000
	maxLinks    = 100
	// secretBytes is the entropy of a session id, a CSRF token and a link
	// code: 160 bits, beyond guessing, short enough for a small QR code.
	secretBytes = 20
	// maxLoginFailures in loginWindow make further credential sign-ins wait
	// for the window to pass: approver tokens may be as short as 16
	// characters (config.Validate), and the page must not be an oracle.
	maxLoginFailures = 10
	loginWindow      = time.Minute
)

// Errors of sign-in, for the handlers to map.
var (
	errNoSession  = errors.New("not signed in")
	errBadLink    = errors.New("this sign-in link is unknown, used already or expired: make a new one with `approvalbot ui-link`")
	errBadToken   = errors.New("unknown approver credential")
	errTooMany    = errors.New("too many failed sign-ins: wait a minute")
	errNoApprover = errors.New("unknown approver")
	errFull       = errors.New("too many sign-in links outstanding: wait for some to expire")
)

// session is one signed-in page.
type session struct {
	approver string
	csrf     string
	expires  time.Time
	done     chan struct{} // closed at sign-out, so the page's event stream ends
}

// link is one unused sign-in link.
type link struct {
	approver string
	expires  time.Time
}

// key is a secret as it is kept: its SHA-256, so a map lookup compares
// hashes (timing tells nothing about the secret) and memory holds no secret
// a dump could replay.
type key [sha256.Size]byte

func keyOf(secret string) key { return sha256.Sum256([]byte(secret)) }

// auth holds the approver credentials, the sessions and the one-time links.
type auth struct {
	creds      map[key]string // approver token's hash -> approver name
	names      map[string]bool
	sessionTTL time.Duration
	linkTTL    time.Duration
	now        func() time.Time

	mu       sync.Mutex
	sessions map[key]*session
	links    map[key]link
	failures []time.Time
}

func newAuth(approvers map[string]string, sessionTTL, linkTTL time.Duration, now func() time.Time) *auth {
	a := &auth{
		creds: map[key]string{}, names: map[string]bool{},
		sessionTTL: sessionTTL, linkTTL: linkTTL, now: now,
		sessions: map[key]*session{}, links: map[key]link{},
	}
	for tok, name := range approvers {
		a.creds[keyOf(tok)] = name
		a.names[name] = true
	}
	return a
}

// newSecret returns secretBytes random bytes, base64url.
func newSecret() string {
	b := make([]byte, secretBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// approver returns the approver whose credential tok is. Every configured
// credential is compared, in constant time, without stopping at a match.
func (a *auth) approver(tok string) (string, bool) {
	if tok == "" {
		return "", false
	}
	h := keyOf(tok)
	name, match := "", 0
	for k, n := range a.creds {
		eq := subtle.ConstantTimeCompare(h[:], k[:])
		if eq == 1 {
			name = n
		}
		match |= eq
	}
	return name, match == 1
}

// login signs in with an approver credential and returns the new session's id.
func (a *auth) login(tok string) (id string, s *session, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	recent := a.failures[:0]
	for _, t := range a.failures {
		if now.Sub(t) < loginWindow {
			recent = append(recent, t)
		}
	}
	a.failures = recent
	if len(a.failures) >= maxLoginFailures {
		return "", nil, errTooMany
	}
	name, ok := a.approver(tok)
	if !ok {
		a.failures = append(a.failures, now)
		return "", nil, errBadToken
	}
	return a.startLocked(name, now)
}

// newLink makes a one-time sign-in code for approver.
func (a *auth) newLink(approver string) (code string, expires time.Time, err error) {
	if !a.names[approver] {
		return "", time.Time{}, errNoApprover
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	a.pruneLocked(now)
	if len(a.links) >= maxLinks {
		return "", time.Time{}, errFull
	}
	code = newSecret()
	expires = now.Add(a.linkTTL)
	a.links[keyOf(code)] = link{approver: approver, expires: expires}
	return code, expires, nil
}

// redeem spends a one-time code: it works once, before it expires, and
// signs in as the approver it was made for.
func (a *auth) redeem(code string) (id string, s *session, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := keyOf(code)
	l, ok := a.links[k]
	delete(a.links, k) // spent whatever happens next
	now := a.now()
	if !ok || !now.Before(l.expires) {
		return "", nil, errBadLink
	}
	return a.startLocked(l.approver, now)
}

func (a *auth) startLocked(approver string, now time.Time) (string, *session, error) {
	a.pruneLocked(now)
	if len(a.sessions) >= maxSessions {
		// Sign out the oldest rather than refuse an approver.
		var oldest key
		var first *session
		for k, s := range a.sessions {
			if first == nil || s.expires.Before(first.expires) {
				oldest, first = k, s
			}
		}
		a.endLocked(oldest)
	}
	id := newSecret()
	s := &session{approver: approver, csrf: newSecret(), expires: now.Add(a.sessionTTL), done: make(chan struct{})}
	a.sessions[keyOf(id)] = s
	return id, s, nil
}

// session returns the live session with id.
func (a *auth) session(id string) (*session, error) {
	if id == "" {
		return nil, errNoSession
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	k := keyOf(id)
	s, ok := a.sessions[k]
	if !ok {
		return nil, errNoSession
	}
	if !a.now().Before(s.expires) {
		a.endLocked(k)
		return nil, errNoSession
	}
	return s, nil
}

// logout ends the session with id.
func (a *auth) logout(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.endLocked(keyOf(id))
}

func (a *auth) endLocked(k key) {
	if s, ok := a.sessions[k]; ok {
		delete(a.sessions, k)
		close(s.done)
	}
}

func (a *auth) pruneLocked(now time.Time) {
	for k, s := range a.sessions {
		if !now.Before(s.expires) {
			a.endLocked(k)
		}
	}
	for k, l := range a.links {
		if !now.Before(l.expires) {
			delete(a.links, k)
		}
	}
}

// csrfOK reports whether got is the session's CSRF token.
func (s *session) csrfOK(got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}

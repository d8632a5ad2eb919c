package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"approvalbot/gate"
)

// ErrUnreachable means the daemon could not be reached (nothing listening,
// connection refused or reset). Callers that gate an agent fail closed on it.
var ErrUnreachable = errors.New("approvalbot daemon unreachable")

// Error codes in error bodies; the client maps them back to gate's sentinels.
const (
	codeInvalid        = "invalid"
	codeUnauthorized   = "unauthorized"
	codeForbidden      = "forbidden"
	codeNotFound       = "not_found"
	codeAlreadyDecided = "already_decided"
	codeDigestMismatch = "digest_mismatch"
	codeConflict       = "idempotency_conflict"
	codeTooLarge       = "too_large"
	codeUnsupported    = "unsupported_media_type"
	codeClosed         = "unavailable"
	codeInternal       = "internal"
	codeMethod         = "method_not_allowed"
	codeTooMany        = "too_many"
)

// Error is an error answer from the server: {"error", "code", "approval"}.
type Error struct {
	Status  int    // HTTP status
	Code    string // machine-readable code (not_found, already_decided, ...)
	Message string
	// Approval is the approval as it is, for 409 already decided.
	Approval *gate.Approval
}

func (e *Error) Error() string {
	return fmt.Sprintf("approvalbot API: %d %s", e.Status, e.Message)
}

// Is matches the gate sentinel for the error's code, so callers can write
// errors.Is(err, gate.ErrNotFound) whether the gate is local or remote.
func (e *Error) Is(target error) bool {
	switch target {
	case gate.ErrNotFound:
		return e.Code == codeNotFound || (e.Code == "" && e.Status == http.StatusNotFound)
	case gate.ErrAlreadyDecided:
		return e.Code == codeAlreadyDecided || (e.Code == "" && e.Status == http.StatusConflict)
	case gate.ErrDigestMismatch:
		return e.Code == codeDigestMismatch
	case gate.ErrConflict:
		return e.Code == codeConflict
	case gate.ErrInvalid:
		return e.Code == codeInvalid
	case gate.ErrClosed:
		return e.Code == codeClosed
	case gate.ErrTooMany:
		return e.Code == codeTooMany || (e.Code == "" && e.Status == http.StatusTooManyRequests)
	}
	return false
}

// errorBody is the JSON of every error answer.
type errorBody struct {
	Error    string        `json:"error"`
	Code     string        `json:"code,omitempty"`
	Approval *approvalJSON `json:"approval,omitempty"`
}

// httpError is an error the API itself raises (bad input, auth).
type httpError struct {
	status int
	code   string
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, codeInvalid, fmt.Sprintf(format, args...)}
}

// statusOf maps an error to the HTTP status, code and message the client
// sees. It is the one place where gate errors become statuses. internal is
// true for errors whose text must not reach the client (logged instead).
func statusOf(err error) (status int, code, msg string, internal bool) {
	var he *httpError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		return he.status, he.code, he.msg, false
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, codeTooLarge, fmt.Sprintf("request body larger than %d bytes", mbe.Limit), false
	case errors.Is(err, gate.ErrNotFound):
		return http.StatusNotFound, codeNotFound, err.Error(), false
	case errors.Is(err, gate.ErrAlreadyDecided):
		return http.StatusConflict, codeAlreadyDecided, err.Error(), false
	case errors.Is(err, gate.ErrDigestMismatch):
		return http.StatusConflict, codeDigestMismatch, err.Error(), false
	case errors.Is(err, gate.ErrConflict):
		return http.StatusConflict, codeConflict, err.Error(), false
	case errors.Is(err, gate.ErrInvalid):
		return http.StatusBadRequest, codeInvalid, err.Error(), false
	case errors.Is(err, gate.ErrTooMany):
		return http.StatusTooManyRequests, codeTooMany, err.Error(), false
	case errors.Is(err, gate.ErrUnauthorized):
		return http.StatusForbidden, codeForbidden, err.Error(), false
	case errors.Is(err, gate.ErrClosed), errors.Is(err, context.Canceled):
		// Canceled: serve cancels the handlers' context at shutdown (or the
		// client left, and then nobody reads this). Either way the request
		// may be retried, so it must not look like a failure.
		return http.StatusServiceUnavailable, codeClosed, "approvalbot is shutting down", false
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, codeClosed, "approvalbot is busy: try again", false
	}
	return http.StatusInternalServerError, codeInternal, "internal error", true
}

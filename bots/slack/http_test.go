package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// signedRequest builds a request the way Slack signs it
// (https://api.slack.com/authentication/verifying-requests-from-slack).
func signedRequest(t *testing.T, path, body, key string, at time.Time) *http.Request {
	t.Helper()
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(key))
	fmt.Fprintf(mac, "v0:%s:%s", ts, body)
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("X-Slack-Request-Timestamp", ts)
	r.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return r
}

func interactionBody(t *testing.T, payload map[string]any) string {
	raw, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return url.Values{"payload": {string(raw)}}.Encode()
}

func TestHTTPInteractivitySignatures(t *testing.T) {
	e := start(t, false)
	a := e.add("rm -rf build")
	body := interactionBody(t, press(approverID, actApprove, buttonValue(a)))
	tests := []struct {
		name string
		req  func() *http.Request
	}{
		{"wrong secret", func() *http.Request { return signedRequest(t, PathInteractivity, body, "not-the-secret", time.Now()) }},
		{"stale", func() *http.Request {
			return signedRequest(t, PathInteractivity, body, secret, time.Now().Add(-6*time.Minute))
		}},
		{"future", func() *http.Request {
			return signedRequest(t, PathInteractivity, body, secret, time.Now().Add(6*time.Minute))
		}},
		{"tampered body", func() *http.Request {
			r := signedRequest(t, PathInteractivity, body, secret, time.Now())
			forged := interactionBody(t, press(strangerID, actApprove, buttonValue(a)))
			r.Body = httptest.NewRequest(http.MethodPost, PathInteractivity, strings.NewReader(forged)).Body
			return r
		}},
		{"unsigned", func() *http.Request {
			r := signedRequest(t, PathInteractivity, body, secret, time.Now())
			r.Header.Del("X-Slack-Signature")
			return r
		}},
		{"forged command", func() *http.Request {
			cmd := url.Values{"command": {"/approvalbot"}, "text": {"mode claude approve_all"}, "user_id": {approverID}}.Encode()
			return signedRequest(t, PathCommands, cmd, "guess", time.Now())
		}},
	}
	h := e.bot.Handler()
	for _, tc := range tests {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, tc.req())
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", tc.name, w.Code)
		}
	}
	e.pending(a.ID)
	if m, _ := e.g.Mode(e.ctx, "claude"); m != gate.ModeInteractive {
		t.Fatalf("a refused request set the mode %s", m)
	}

	// The genuine request is accepted and decides.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(t, PathInteractivity, body, secret, time.Now()))
	if w.Code != http.StatusOK {
		t.Fatalf("signed request: status %d %s", w.Code, w.Body)
	}
	if got := e.decided(a.ID); got.Status != gate.StatusApproved || got.DecidedBy != "<@"+approverID+">" {
		t.Fatalf("decided = %+v", got)
	}
}

func TestHTTPReasonAndCommand(t *testing.T) {
	e := start(t, false)
	a := e.add("rm -rf build")
	h := e.bot.Handler()

	meta := reasonMeta(a.ID, prompt.DigestPrefix(a), chanID)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(t, PathInteractivity, interactionBody(t, reasonSubmission(strangerID, meta, "x")), secret, time.Now()))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"response_action":"errors"`) {
		t.Fatalf("stranger's submission: %d %s", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(t, PathInteractivity, interactionBody(t, reasonSubmission(approverID, meta, "no")), secret, time.Now()))
	if w.Code != http.StatusOK || w.Body.Len() != 0 {
		t.Fatalf("approver's submission: %d %s", w.Code, w.Body)
	}
	if got := e.decided(a.ID); got.Status != gate.StatusDenied || got.Reason != "no" {
		t.Fatalf("decided = %+v", got)
	}

	cmd := url.Values{"command": {"/approvalbot"}, "text": {"mode claude strict"}, "user_id": {approverID}}.Encode()
	w = httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(t, PathCommands, cmd, secret, time.Now()))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "now strict") || !strings.Contains(w.Body.String(), `"ephemeral"`) {
		t.Fatalf("command: %d %s", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, PathCommands, nil))
	if w.Code == http.StatusOK {
		t.Fatal("GET accepted")
	}
}

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
	a := testApproval("A1")
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
	e := start(t, false, a)
	h := e.bot.Handler()
	for _, tc := range tests {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, tc.req())
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", tc.name, w.Code)
		}
	}
	if len(e.fg.decided()) != 0 || e.fg.mode("claude") != "" {
		t.Fatalf("a refused request changed something: %+v", e.fg.decided())
	}

	// The genuine request is accepted and decides.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(t, PathInteractivity, body, secret, time.Now()))
	if w.Code != http.StatusOK {
		t.Fatalf("signed request: status %d %s", w.Code, w.Body)
	}
	if d := e.awaitDecisions(1)[0]; !d.Approve || d.By != "<@"+approverID+">" {
		t.Fatalf("decision = %+v", d)
	}
}

func TestHTTPReasonAndCommand(t *testing.T) {
	a := testApproval("A1")
	e := start(t, false, a)
	h := e.bot.Handler()

	meta := reasonMeta("A1", a.Digest[:digestPrefixLen], chanID)
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
	if d := e.fg.decided(); len(d) != 1 || d[0].Reason != "no" || d[0].Approve {
		t.Fatalf("decisions = %+v", d)
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

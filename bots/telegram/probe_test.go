package telegram

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"approvalbot/bots/telegramtest"
)

// The emulators' success, bad-token and unreachable cases of Probe run
// through doctor (cmd/approvalbot TestFrontendProbes), for both frontends.

const probeToken = "123456:probe-SECRET-token"

// withGetChat answers getChat (which the emulator lacks) in front of fake:
// chat 42 exists, no other does; every other call passes through.
func withGetChat(t *testing.T, fake *telegramtest.Server) string {
	t.Helper()
	target, _ := url.Parse(fake.APIURL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/getChat") {
			proxy.ServeHTTP(w, r)
			return
		}
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if r.Form.Get("chat_id") != "42" {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: chat not found"})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": map[string]any{"id": 42, "type": "private"}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestProbeChat: with a chat id, Probe asks getChat for it.
func TestProbeChat(t *testing.T) {
	apiURL := withGetChat(t, telegramtest.New(t, probeToken))
	for chat, want := range map[int64]string{
		42: "[token belongs to @approval_test_bot chat 42 is reachable] <nil>",
		7:  "[token belongs to @approval_test_bot] chat 7 is not reachable: 400 Bad Request: chat not found",
	} {
		b, err := New(Config{Token: probeToken, ChatID: chat, APIURL: apiURL}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		passed, err := b.Probe(context.Background())
		b.Close()
		if got := strings.TrimSpace(fmtProbe(passed, err)); got != want {
			t.Errorf("chat %d: %s, want %s", chat, got, want)
		}
	}
}

// fmtProbe shows Probe's outcome on one line.
func fmtProbe(passed []string, err error) string {
	s := "[" + strings.Join(passed, " ") + "] "
	if err == nil {
		return s + "<nil>"
	}
	return s + err.Error()
}

// TestProbeRedactsEchoedToken: a Bot API (or a proxy in front of it) that
// quotes the token back in its answer does not get it printed.
func TestProbeRedactsEchoedToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized: no bot at " + r.URL.Path})
	}))
	defer srv.Close()
	b, err := New(Config{Token: probeToken, APIURL: srv.URL}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = b.Probe(context.Background())
	if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "/bot<token>/getMe") {
		t.Fatalf("err = %v, want the path with the token redacted", err)
	}
}

// TestProbeHonoursContext: a Bot API that never answers does not hold the
// probe past its context.
func TestProbeHonoursContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	b, err := New(Config{Token: probeToken, APIURL: srv.URL}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = b.Probe(ctx)
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("err = %v, want a deadline error without the token", err)
	}
}

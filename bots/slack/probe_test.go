package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The emulator's success, bad-token, channel and unreachable cases of
// Probe run through doctor (cmd/approvalbot TestFrontendProbes), for both
// frontends.

// TestProbeRedactsEchoedToken: a Web API (or a proxy in front of it) that
// quotes a token back in its error does not get it printed.
func TestProbeRedactsEchoedToken(t *testing.T) {
	const bot, app = "xoxb-probe-SECRET", "xapp-probe-SECRET"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "invalid_auth for " + r.Form.Get("token") + " / " + app})
	}))
	defer srv.Close()
	b, err := New(Config{BotToken: bot, AppToken: app, Channel: "C1", APIURL: srv.URL + "/"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = b.Probe(context.Background())
	pe, ok := err.(*ProbeError)
	if !ok || strings.Contains(pe.Error()+pe.Fix(), "SECRET") || pe.Error() != "auth.test refused the bot token: invalid_auth for <token> / <token>" {
		t.Fatalf("err = %v, want both tokens redacted", err)
	}
}

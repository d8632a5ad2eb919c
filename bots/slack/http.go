package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/slack-go/slack"
)

// maxRequestBody bounds an interactivity or slash-command request; Slack's
// payloads are a few kilobytes.
const maxRequestBody = 1 << 20

// handlerTimeout bounds the work done after a request is answered.
const handlerTimeout = 30 * time.Second

// Paths of the HTTP interactivity endpoints (set them as the Request URLs
// of the Slack app's Interactivity and slash command).
const (
	PathInteractivity = "/slack/interactivity"
	PathCommands      = "/slack/commands"
)

// Handler serves HTTP interactivity (POST /slack/interactivity) and the
// slash command (POST /slack/commands), the alternative to Socket Mode.
// Every request must carry a valid Slack signature made with the signing
// secret and a timestamp within five minutes; anything else gets 401 and is
// not looked at. Without a signing secret every request is refused.
func (b *Bot) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathInteractivity, b.verified(b.serveInteractivity))
	mux.HandleFunc("POST "+PathCommands, b.verified(b.serveCommand))
	return mux
}

// verified checks a request's signature and hands the handler its body.
func (b *Bot) verified(next func(w http.ResponseWriter, r *http.Request, form url.Values)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if b.cfg.SigningSecret == "" {
			http.Error(w, "HTTP interactivity is not configured", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
		if err != nil || len(body) > maxRequestBody {
			http.Error(w, "bad request body", http.StatusBadRequest)
			return
		}
		sv, err := slack.NewSecretsVerifier(r.Header, b.cfg.SigningSecret)
		if err == nil {
			_, _ = sv.Write(body)
			err = sv.Ensure()
		}
		if err != nil {
			b.logger.Warn("slack request refused: bad or stale signature", "path", r.URL.Path, "remote", r.RemoteAddr)
			http.Error(w, "invalid signature", http.StatusUnauthorized)
			return
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next(w, r, form)
	}
}

func (b *Bot) serveInteractivity(w http.ResponseWriter, r *http.Request, form url.Values) {
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		http.Error(w, "bad payload", http.StatusBadRequest)
		return
	}
	if needsSyncAnswer(&cb) {
		writeJSON(w, b.interaction(r.Context(), &cb))
		return
	}
	// Answer at once (Slack wants it within 3 s) and do the work after.
	w.WriteHeader(http.StatusOK)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), handlerTimeout)
	go func() {
		defer cancel()
		b.interaction(ctx, &cb)
	}()
}

func (b *Bot) serveCommand(w http.ResponseWriter, r *http.Request, form url.Values) {
	cmd := slack.SlashCommand{
		Command:   form.Get("command"),
		Text:      form.Get("text"),
		UserID:    form.Get("user_id"),
		ChannelID: form.Get("channel_id"),
		TeamID:    form.Get("team_id"),
	}
	writeJSON(w, commandAnswer(b.command(r.Context(), &cmd)))
}

func writeJSON(w http.ResponseWriter, v any) {
	if v == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

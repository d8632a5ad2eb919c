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
	"github.com/slack-go/slack/slackevents"
)

// maxRequestBody bounds an interactivity or slash-command request; Slack's
// payloads are a few kilobytes.
const maxRequestBody = 1 << 20

// handlerTimeout bounds the work done after a request is answered.
const handlerTimeout = 30 * time.Second

// Paths of the HTTP endpoints (set them as the Request URLs of the Slack
// app's Interactivity, slash command and Event Subscriptions).
const (
	PathInteractivity = "/slack/interactivity"
	PathCommands      = "/slack/commands"
	PathEvents        = "/slack/events"
)

// Handler serves HTTP interactivity (POST /slack/interactivity), the slash
// command (POST /slack/commands) and the Events API (POST /slack/events:
// replies in words), the alternative to Socket Mode. Every request must
// carry a valid Slack signature made with the signing secret and a
// timestamp within five minutes; anything else gets 401 and is not looked
// at. Without a signing secret every request is refused.
func (b *Bot) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathInteractivity, b.verified(b.serveInteractivity))
	mux.HandleFunc("POST "+PathCommands, b.verified(b.serveCommand))
	mux.HandleFunc("POST "+PathEvents, b.verifiedBody(b.serveEvents))
	return mux
}

// verified checks a request's signature and hands the handler its form.
func (b *Bot) verified(next func(w http.ResponseWriter, r *http.Request, form url.Values)) http.HandlerFunc {
	return b.verifiedBody(func(w http.ResponseWriter, r *http.Request, body []byte) {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		next(w, r, form)
	})
}

// verifiedBody checks a request's signature and hands the handler its body.
func (b *Bot) verifiedBody(next func(w http.ResponseWriter, r *http.Request, body []byte)) http.HandlerFunc {
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
		r.Body = io.NopCloser(bytes.NewReader(body))
		next(w, r, body)
	}
}

// serveEvents answers the Events API: the URL check with its challenge,
// and a message event at once (Slack wants it within 3 s), handled after.
func (b *Bot) serveEvents(w http.ResponseWriter, r *http.Request, body []byte) {
	// The signature was checked; the verification token is not used.
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil {
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
	if ev.Type == slackevents.URLVerification {
		if c, ok := ev.Data.(*slackevents.EventsAPIURLVerificationEvent); ok {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, c.Challenge)
			return
		}
		http.Error(w, "bad challenge", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
	if msg := messageEvent(ev); msg != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), handlerTimeout)
		go func() {
			defer cancel()
			b.onMessage(ctx, msg)
		}()
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

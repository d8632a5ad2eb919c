package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"approvalbot/api"
	"approvalbot/bots/slack"
	"approvalbot/bots/telegram"
	"approvalbot/config"
	"approvalbot/gate"
)

// frontends are the chat frontends serve runs beside the API.
type frontends struct {
	names    []string
	handlers map[string]http.Handler // extra routes on the API listener (webhooks, Slack HTTP interactivity)
	closers  []func() error
	wg       sync.WaitGroup
}

// startFrontends builds the configured chat frontends, registers them with
// the gate (before gate.Start, so restart replay reaches them) and starts
// their loops on ctx.
func startFrontends(ctx context.Context, e *env, s config.Settings, g *gate.Gate, m *api.Metrics, logger *slog.Logger) (*frontends, error) {
	f := &frontends{handlers: map[string]http.Handler{}}
	if s.TelegramToken != "" {
		bot, err := telegram.New(telegram.Config{
			Token:         s.TelegramToken,
			ChatID:        s.TelegramChatID,
			Approvers:     s.TelegramApprovers,
			APIURL:        s.TelegramAPIURL,
			WebhookURL:    s.TelegramWebhookURL,
			WebhookSecret: s.TelegramWebhookSecret,
		}, g, logger)
		if err != nil {
			return nil, fmt.Errorf("telegram: %w", err)
		}
		bot.OnSendFailure(sendFailures(m, "telegram"))
		g.AddNotifier(bot)
		if s.TelegramWebhookURL != "" {
			f.handlers["/telegram/webhook"] = bot.WebhookHandler()
		}
		f.run(ctx, "telegram", bot.Run, bot.Close, logger)
		if code := bot.PairingCode(); code != "" {
			// Printed, not logged at a level that could be filtered: the
			// person setting up needs it.
			fmt.Fprintf(e.stderr, "Telegram: send  /pair %s  to the bot from the chat that should receive prompts (approvers only)\n", code)
		}
	}
	if s.SlackBotToken != "" {
		bot, err := slack.New(slack.Config{
			BotToken:      s.SlackBotToken,
			AppToken:      s.SlackAppToken,
			Channel:       s.SlackChannel,
			Approvers:     s.SlackApprovers,
			SigningSecret: s.SlackSigningSecret,
			APIURL:        s.SlackAPIURL,
		}, g, logger)
		if err != nil {
			return nil, fmt.Errorf("slack: %w", err)
		}
		bot.OnSendFailure(sendFailures(m, "slack"))
		g.AddNotifier(bot)
		if s.SlackSigningSecret != "" {
			f.handlers["/slack/"] = bot.Handler()
		}
		f.run(ctx, "slack", bot.Run, bot.Close, logger)
	}
	return f, nil
}

// sendFailures counts a frontend's failed sends in the metrics.
func sendFailures(m *api.Metrics, frontend string) func(retrying bool) {
	return func(retrying bool) {
		if retrying {
			m.SendRetry(frontend)
		} else {
			m.SendError(frontend)
		}
	}
}

// run starts a frontend's loop; close runs after the loop has returned.
func (f *frontends) run(ctx context.Context, name string, run func(context.Context) error, closeFn func() error, logger *slog.Logger) {
	f.names = append(f.names, name)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if err := run(ctx); err != nil && ctx.Err() == nil {
			logger.Error("frontend stopped", "frontend", name, "err", err)
		}
	}()
	f.closers = append(f.closers, closeFn)
}

// wait waits for the loops (after ctx ended) and closes the frontends.
func (f *frontends) wait() {
	f.wg.Wait()
	for _, c := range f.closers {
		c()
	}
}

// mux puts the frontends' routes beside the API.
func (f *frontends) mux(api http.Handler) http.Handler {
	if len(f.handlers) == 0 {
		return api
	}
	m := http.NewServeMux()
	for p, h := range f.handlers {
		m.Handle(p, h)
	}
	m.Handle("/", api)
	return m
}

package slack

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"approvalbot/backoff"
)

// errSocketEnded is a Socket Mode run that ended without an error.
var errSocketEnded = errors.New("socket mode connection ended")

// Reconnect backoff after socketmode gives up (it retries transient
// failures itself; it returns on fatal ones such as a revoked token).
var socketBackoff = backoff.Policy{Min: time.Second, Max: 5 * time.Minute}

// runSocket keeps a Socket Mode connection until ctx ends, acknowledging
// every envelope as soon as it arrives.
func (b *Bot) runSocket(ctx context.Context) error {
	client := socketmode.New(b.api,
		socketmode.OptionLog(slog.NewLogLogger(b.logger.Handler(), slog.LevelDebug)))
	var wg sync.WaitGroup
	defer wg.Wait()
	evCtx, stop := context.WithCancel(ctx)
	defer stop()
	wg.Go(func() { b.socketEvents(evCtx, client, &wg) })

	backoff.Retry(ctx, socketBackoff, func(ctx context.Context) error {
		err := client.RunContext(ctx)
		if err == nil && ctx.Err() == nil {
			err = errSocketEnded
		}
		return err
	}, nil, func(err error, wait time.Duration) {
		b.logger.Error("socket mode connection failed; retrying", "in", wait, "err", err)
	})
	return nil
}

// socketEvents dispatches Socket Mode events until ctx ends.
func (b *Bot) socketEvents(ctx context.Context, client *socketmode.Client, wg *sync.WaitGroup) {
	for {
		var evt socketmode.Event
		select {
		case <-ctx.Done():
			return
		case evt = <-client.Events:
		}
		switch evt.Type {
		case socketmode.EventTypeConnected:
			b.logger.Info("socket mode connected")
		case socketmode.EventTypeConnectionError, socketmode.EventTypeIncomingError, socketmode.EventTypeErrorBadMessage:
			b.logger.Warn("socket mode trouble", "event", evt.Type)
		case socketmode.EventTypeInteractive:
			cb, ok := evt.Data.(slack.InteractionCallback)
			if !ok || evt.Request == nil {
				b.ack(ctx, client, evt, nil)
				continue
			}
			if needsSyncAnswer(&cb) {
				b.ack(ctx, client, evt, b.interaction(ctx, &cb))
				continue
			}
			// Slack wants the ack within 3 s; the work may take longer.
			b.ack(ctx, client, evt, nil)
			wg.Go(func() { b.interaction(ctx, &cb) })
		case socketmode.EventTypeEventsAPI:
			b.ack(ctx, client, evt, nil)
			if ev, ok := evt.Data.(slackevents.EventsAPIEvent); ok {
				if msg := messageEvent(ev); msg != nil {
					wg.Go(func() { b.onMessage(ctx, msg) })
				}
			}
		case socketmode.EventTypeSlashCommand:
			cmd, ok := evt.Data.(slack.SlashCommand)
			if !ok {
				b.ack(ctx, client, evt, nil)
				continue
			}
			b.ack(ctx, client, evt, commandAnswer(b.command(ctx, &cmd)))
		default:
			b.ack(ctx, client, evt, nil)
		}
	}
}

// ack acknowledges evt's envelope, if it has one, with payload.
func (b *Bot) ack(ctx context.Context, client *socketmode.Client, evt socketmode.Event, payload any) {
	if evt.Request == nil || evt.Request.EnvelopeID == "" {
		return
	}
	if err := client.AckCtx(ctx, evt.Request.EnvelopeID, payload); err != nil {
		b.logger.Warn("socket mode ack failed", "event", evt.Type, "err", err)
	}
}

package slack

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"approvalbot/bots/outbox"
	"approvalbot/gate"
)

// ref returns the message this frontend posted for a, or nil.
func ref(a *gate.Approval) *gate.MessageRef {
	for i := range a.Messages {
		if m := &a.Messages[i]; m.Frontend == Name && m.MessageID != "" {
			return m
		}
	}
	return nil
}

// Notify implements gate.Notifier: it posts the prompt to the channel and
// records the message with the gate. After a restart it edits the message
// it already posted (its buttons keep working: they carry the approval id),
// and posts a new one if the edit is refused.
func (b *Bot) Notify(ctx context.Context, a *gate.Approval) error {
	now := b.cfg.Now()
	if m := ref(a); m != nil && a.Restarts > 0 {
		note := "Still waiting (approvalbot restarted at " + now.UTC().Format("2006-01-02 15:04:05 UTC") + ")"
		v := render(a, now, note)
		err := b.update(ctx, m.ChatID, m.MessageID, v)
		if err == nil {
			return nil
		}
		if !outbox.IsPermanent(err) {
			return fmt.Errorf("refresh slack prompt of %s: %w", a.ID, err)
		}
		b.logger.Warn("could not refresh the prompt after a restart; posting it again", "approval", a.ID, "err", err)
	}
	return b.post(ctx, a, render(a, now, ""))
}

// post sends a new prompt message, records it, and puts the full text in
// its thread when the message had to be cut.
func (b *Bot) post(ctx context.Context, a *gate.Approval, v view) error {
	var channel, ts string
	err := b.out.Send(ctx, b.dest(), func(ctx context.Context) error {
		var err error
		channel, ts, err = b.api.PostMessageContext(ctx, b.cfg.Channel,
			slack.MsgOptionText(v.Fallback, false), slack.MsgOptionBlocks(v.Blocks...))
		return sendErr(err)
	})
	if err != nil {
		return fmt.Errorf("post slack prompt of %s: %w", a.ID, err)
	}
	if channel == "" {
		channel = b.cfg.Channel
	}
	if _, err := b.g.AddMessageRef(ctx, a.ID, gate.MessageRef{Frontend: Name, ChatID: channel, MessageID: ts, SentAt: b.cfg.Now()}); err != nil {
		// The prompt is out and its buttons work; only the later edit is lost.
		b.logger.Error("record slack message failed", "approval", a.ID, "err", err)
	}
	b.logger.Info("prompt posted", "approval", a.ID, "agent", a.Agent, "ts", ts)
	if v.Cut {
		for _, chunk := range threadChunks(v.Full) {
			err := b.out.Send(ctx, b.dest(), func(ctx context.Context) error {
				_, _, err := b.api.PostMessageContext(ctx, channel, slack.MsgOptionTS(ts),
					slack.MsgOptionText(chunk, false), slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl())
				return sendErr(err)
			})
			if err != nil {
				return fmt.Errorf("post full text of %s to its thread: %w", a.ID, err)
			}
		}
	}
	return nil
}

// update replaces the message at channel/ts with v.
func (b *Bot) update(ctx context.Context, channel, ts string, v view) error {
	return b.out.Send(ctx, b.dest(), func(ctx context.Context) error {
		_, _, _, err := b.api.UpdateMessageContext(ctx, channel, ts,
			slack.MsgOptionText(v.Fallback, false), slack.MsgOptionBlocks(v.Blocks...))
		return sendErr(err)
	})
}

// Resolved implements gate.Notifier: it edits the prompt to show the
// outcome, who decided and when, without buttons, wherever the decision
// was made.
func (b *Bot) Resolved(ctx context.Context, a *gate.Approval) error {
	m := ref(a)
	if m == nil {
		// The approval we were given may predate our message ref.
		fresh, err := b.g.Get(ctx, a.ID)
		if err != nil {
			return fmt.Errorf("get approval %s: %w", a.ID, err)
		}
		if m = ref(fresh); m == nil {
			return nil // never shown in Slack
		}
	}
	if err := b.update(ctx, m.ChatID, m.MessageID, render(a, b.cfg.Now(), "")); err != nil {
		return fmt.Errorf("show outcome of %s in slack: %w", a.ID, err)
	}
	return nil
}

package slack

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"approvalbot/bots/outbox"
	"approvalbot/gate"
)

var _ gate.Notifier = (*Bot)(nil)

// Show implements gate.Notifier: it posts v's prompt to the channel, and
// the full text in its thread when the message had to be cut.
func (b *Bot) Show(ctx context.Context, v gate.View) (gate.MessageRef, error) {
	a := v.Approval
	rv := render(v, b.cfg.Now())
	var channel, ts string
	err := b.out.Send(ctx, b.dest(), func(ctx context.Context) error {
		var err error
		channel, ts, err = b.api.PostMessageContext(ctx, b.cfg.Channel,
			slack.MsgOptionText(rv.Fallback, false), slack.MsgOptionBlocks(rv.Blocks...))
		return sendErr(err)
	})
	if err != nil {
		return gate.MessageRef{}, fmt.Errorf("post slack prompt of %s: %w", a.ID, err)
	}
	if channel == "" {
		channel = b.cfg.Channel
	}
	ref := gate.MessageRef{Frontend: Name, ChatID: channel, MessageID: ts, SentAt: b.cfg.Now()}
	b.logger.Info("prompt posted", "approval", a.ID, "agent", a.Agent, "ts", ts)
	b.remember(ctx, channel, ts, v)
	if rv.Cut {
		for _, chunk := range threadChunks(rv.Full) {
			err := b.out.Send(ctx, b.dest(), func(ctx context.Context) error {
				_, _, err := b.api.PostMessageContext(ctx, channel, slack.MsgOptionTS(ts),
					slack.MsgOptionText(chunk, false), slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl())
				return sendErr(err)
			})
			if err != nil {
				// The prompt is out and its buttons work: say where it is.
				b.logger.Error("post full text to the thread", "approval", a.ID, "err", err)
				break
			}
		}
	}
	return ref, nil
}

// Update implements gate.Notifier: it edits the message at ref to show v
// (the outcome without buttons, or a refreshed prompt). A refused edit of
// a prompt (deleted message, archived channel) is ErrMessageGone.
func (b *Bot) Update(ctx context.Context, ref gate.MessageRef, v gate.View) error {
	err := b.update(ctx, ref.ChatID, ref.MessageID, render(v, b.cfg.Now()))
	switch {
	case err == nil:
		b.remember(ctx, ref.ChatID, ref.MessageID, v)
		return nil
	case outbox.IsPermanent(err):
		return fmt.Errorf("update slack message of %s: %w (%w)", v.Approval.ID, gate.ErrMessageGone, err)
	}
	return fmt.Errorf("update slack message of %s: %w", v.Approval.ID, err)
}

// update replaces the message at channel/ts with v.
func (b *Bot) update(ctx context.Context, channel, ts string, v view) error {
	return b.out.Send(ctx, b.dest(), func(ctx context.Context) error {
		_, _, _, err := b.api.UpdateMessageContext(ctx, channel, ts,
			slack.MsgOptionText(v.Fallback, false), slack.MsgOptionBlocks(v.Blocks...))
		return sendErr(err)
	})
}

// editButtons shows the Always scope step on a pending prompt (scopes),
// or puts the prompt's own buttons back, if the approval is still pending
// when the edit's turn comes: the step never revives a decided prompt.
func (b *Bot) editButtons(ctx context.Context, channel, ts, id string, scopes bool) error {
	return b.out.Send(ctx, b.dest(), func(ctx context.Context) error {
		a, err := b.g.Get(ctx, id)
		if err != nil || a.Status.Final() {
			return nil
		}
		v := renderScopes(a, b.cfg.Now())
		if !scopes {
			v = render(gate.View{Approval: a}, b.cfg.Now())
		}
		_, _, _, err = b.api.UpdateMessageContext(ctx, channel, ts,
			slack.MsgOptionText(v.Fallback, false), slack.MsgOptionBlocks(v.Blocks...))
		return sendErr(err)
	})
}

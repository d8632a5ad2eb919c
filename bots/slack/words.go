package slack

import (
	"context"
	"errors"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// Replies in words (DESIGN.md, Frontends): a reply in a prompt's thread
// ("yes", "no, use make", "always", "stop") decides what the prompt
// showed when the reply was written, the way a button on it would, with
// the grammar every frontend shares (prompt.ParseReply). The bot
// remembers, per message, the calls (and the batch) it last rendered
// there. Slack delivers thread replies as message events with thread_ts,
// which needs the channels:history (groups:history for a private
// channel) scope and the message.channels (message.groups) subscription.

// keyShownPrefix + channel + "." + message ts: what the message shows.
const keyShownPrefix = "slack.shown."

func shownKey(channel, ts string) string { return keyShownPrefix + channel + "." + ts }

// remember records what the message at channel/ts shows now.
func (b *Bot) remember(ctx context.Context, channel, ts string, v gate.View) {
	if err := b.g.SetValue(ctx, shownKey(channel, ts), prompt.ShownOf(v).Encode()); err != nil && ctx.Err() == nil {
		b.logger.Error("remember what a prompt shows", "ts", ts, "err", err)
	}
}

// messageEvent returns the message event an Events API event carries, or nil.
func messageEvent(ev slackevents.EventsAPIEvent) *slackevents.MessageEvent {
	if ev.Type != slackevents.CallbackEvent {
		return nil
	}
	switch m := ev.InnerEvent.Data.(type) {
	case *slackevents.MessageEvent:
		return m
	case slackevents.MessageEvent:
		return &m
	}
	return nil
}

// onMessage decides from a reply in words in a prompt's thread. Anything
// else (top-level messages, edits, bots, other channels, threads that are
// not a prompt's) is ignored.
func (b *Bot) onMessage(ctx context.Context, ev *slackevents.MessageEvent) {
	if ev == nil || ev.SubType != "" || ev.BotID != "" || ev.User == "" || ev.Channel != b.cfg.Channel ||
		ev.ThreadTimeStamp == "" || ev.ThreadTimeStamp == ev.TimeStamp {
		return
	}
	channel, thread, user := ev.Channel, ev.ThreadTimeStamp, ev.User
	raw, err := b.g.Value(ctx, shownKey(channel, thread))
	if err != nil {
		if !errors.Is(err, gate.ErrNotFound) {
			b.logger.Error("load what a prompt shows", "err", err)
		}
		return
	}
	s, ok := prompt.DecodeShown(raw)
	if !ok {
		return
	}
	if !b.isApprover(user) {
		// Only they see it: a stranger never adds to the thread.
		b.logger.Warn("reply by a non-approver refused", "user", user, "ts", thread)
		b.ephemeral(ctx, channel, user, msgNotAllowed)
		return
	}
	say := func(text string) { b.threadReply(ctx, channel, thread, text) }
	r := prompt.ParseReply(ev.Text)
	if r.Kind == prompt.ReplyUnclear {
		say(Escape(prompt.ReplyHelp))
		return
	}
	if s.Pending == 0 {
		say(b.outcomes(ctx, s.IDs))
		return
	}
	by := "<@" + user + ">"
	if s.BatchReply() {
		if r.Kind == prompt.ReplyAlways {
			say(Escape(prompt.ReplyAlwaysInBatch))
			return
		}
		d := prompt.ReplyBatchDecision(r)
		d.By, d.Via = by, Name
		rs, err := b.g.DecideBatch(ctx, s.Batch, s.BDigest, d)
		switch {
		case err == nil:
			say(Escape(prompt.BatchOutcome(d.Approve, rs)))
		case errors.Is(err, gate.ErrNotFound):
			say(b.outcomes(ctx, s.IDs))
		default:
			b.logger.Error("decide batch from a reply", "batch", s.Batch, "err", err)
			say(Escape(prompt.ReplyFailed))
		}
		return
	}
	id, digest := s.IDs[0], s.Digests[0]
	d, askScope := prompt.ReplyDecision(r, by, b.cfg.Now())
	if askScope {
		b.replyScope(ctx, channel, thread, id)
		return
	}
	d.By, d.Via, d.Digest = by, Name, digest
	a, err := b.g.Decide(ctx, id, d)
	text, failed := prompt.ReplyDecided(a, err)
	if failed {
		b.logger.Error("decide from a reply", "approval", id, "err", err)
	}
	text = Escape(text)
	if a != nil && a.Via == Name && slackMention.MatchString(a.DecidedBy) {
		text = replaceEscaped(text, a.DecidedBy) // the decider as a mention
	}
	say(text)
}

// replyScope shows the Always scope step on the prompt, for a reply
// "always" that named no scope.
func (b *Bot) replyScope(ctx context.Context, channel, ts, id string) {
	a, err := b.g.Get(ctx, id)
	if err != nil || a.Status.Final() {
		b.threadReply(ctx, channel, ts, Escape(prompt.ReplyNotPending))
		return
	}
	if len(a.Evaluation.AlwaysRules) == 0 {
		b.threadReply(ctx, channel, ts, Escape(prompt.ReplyNoAlways))
		return
	}
	b.threadReply(ctx, channel, ts, Escape(prompt.ScopeQuestion(prompt.Build(a, b.cfg.Now()))+" (buttons on the prompt)"))
	if err := b.editButtons(ctx, channel, ts, id, true); err != nil {
		b.logger.Warn("Always scope step failed", "approval", id, "err", err)
	}
}

// outcomes says who decided each call, for a reply to a decided prompt.
func (b *Bot) outcomes(ctx context.Context, ids []string) string {
	var as []*gate.Approval
	for _, id := range ids {
		if a, err := b.g.Get(ctx, id); err == nil {
			as = append(as, a)
		}
	}
	text := Escape(prompt.AlreadyDecided(as))
	for _, a := range as {
		if a.Via == Name && slackMention.MatchString(a.DecidedBy) {
			text = replaceEscaped(text, a.DecidedBy)
		}
	}
	return text
}

// threadReply posts text (mrkdwn, escaped by the caller) in the thread
// of the message at channel/ts, paced with the prompts.
func (b *Bot) threadReply(ctx context.Context, channel, ts, text string) {
	err := b.out.Send(ctx, b.dest(), func(ctx context.Context) error {
		_, _, err := b.api.PostMessageContext(ctx, channel, slack.MsgOptionTS(ts),
			slack.MsgOptionText(text, false), slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl())
		return sendErr(err)
	})
	if err != nil && ctx.Err() == nil {
		b.logger.Error("reply in a prompt's thread", "ts", ts, "err", err)
	}
}

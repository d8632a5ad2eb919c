package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// Replies in words: a reply to a prompt message ("yes", "no, use make",
// "always", "stop") decides what that message showed when the reply was
// written, the way a button on it would. The bot remembers, per message,
// the calls (and the batch) it last rendered there.

// keyShownPrefix + chat + "." + message id: what the message shows.
const keyShownPrefix = "telegram.shown."

func shownKey(chat int64, msgID int) string {
	return keyShownPrefix + strconv.FormatInt(chat, 10) + "." + strconv.Itoa(msgID)
}

// remember records what message msgID in chat shows now.
func (b *Bot) remember(ctx context.Context, chat int64, msgID int, v gate.View) {
	if err := b.g.SetValue(ctx, shownKey(chat, msgID), prompt.ShownOf(v).Encode()); err != nil && ctx.Err() == nil {
		b.logger.Error("remember what a prompt shows", "message", msgID, "err", err)
	}
}

// onWordsReply decides from a reply in words to a prompt message. It
// reports whether msg was a reply to one of our prompts.
func (b *Bot) onWordsReply(ctx context.Context, msg *tgbotapi.Message) bool {
	if msg.ReplyToMessage == nil || strings.HasPrefix(msg.Text, "/") {
		return false
	}
	chat, promptID := msg.Chat.ID, msg.ReplyToMessage.MessageID
	raw, err := b.g.Value(ctx, shownKey(chat, promptID))
	if err != nil {
		if !errors.Is(err, gate.ErrNotFound) {
			b.logger.Error("load what a prompt shows", "err", err)
		}
		return false
	}
	s, ok := prompt.DecodeShown(raw)
	if !ok {
		return false
	}
	say := func(text string) { b.reply(ctx, chat, msg.MessageID, text) }
	if !b.authorized(msg.From) {
		if b.admit(ctx, msg) {
			say(prompt.ReplyNotApprover)
		}
		return true
	}
	r := prompt.ParseReply(msg.Text)
	if r.Kind == prompt.ReplyUnclear {
		say(prompt.ReplyHelp)
		return true
	}
	if s.Pending == 0 {
		say(b.outcomes(ctx, s.IDs))
		return true
	}
	by := who(msg.From)
	if s.BatchReply() {
		if r.Kind == prompt.ReplyAlways {
			say(prompt.ReplyAlwaysInBatch)
			return true
		}
		d := prompt.ReplyBatchDecision(r)
		d.By, d.Via = by, Name
		rs, err := b.g.DecideBatch(ctx, s.Batch, s.BDigest, d)
		switch {
		case err == nil:
			say(prompt.BatchOutcome(d.Approve, rs))
		case errors.Is(err, gate.ErrNotFound):
			say(b.outcomes(ctx, s.IDs))
		default:
			b.logger.Error("decide batch from a reply", "batch", s.Batch, "err", err)
			say(prompt.ReplyFailed)
		}
		return true
	}
	id, digest := s.IDs[0], s.Digests[0]
	d, askScope := prompt.ReplyDecision(r, by, b.now())
	if askScope {
		b.askScope(ctx, chat, promptID, msg.MessageID, id)
		return true
	}
	d.By, d.Via, d.Digest = by, Name, digest
	a, err := b.g.Decide(ctx, id, d)
	text, failed := prompt.ReplyDecided(a, err)
	if failed {
		b.logger.Error("decide from a reply", "approval", id, "err", err)
	}
	say(text)
	return true
}

// askScope shows the Always scope step on the prompt, for a reply
// "always" that named no scope.
func (b *Bot) askScope(ctx context.Context, chat int64, promptID, replyID int, id string) {
	a, err := b.g.Get(ctx, id)
	if err != nil || a.Status.Final() {
		b.reply(ctx, chat, replyID, prompt.ReplyNotPending)
		return
	}
	if len(a.Evaluation.AlwaysRules) == 0 {
		b.reply(ctx, chat, replyID, prompt.ReplyNoAlways)
		return
	}
	b.reply(ctx, chat, replyID, prompt.ScopeQuestion(prompt.Build(a, b.now()))+" (buttons on the prompt)")
	b.async(ctx, func(ctx context.Context) {
		if err := b.editMarkup(ctx, chat, promptID, a.ID, scopeKeyboard(a)); err != nil {
			b.logger.Error("show Always scopes", "approval", a.ID, "err", err)
		}
	})
}

// outcomes says who decided each call, for a reply to a decided prompt.
func (b *Bot) outcomes(ctx context.Context, ids []string) string {
	var as []*gate.Approval
	for _, id := range ids {
		if a, err := b.g.Get(ctx, id); err == nil {
			as = append(as, a)
		}
	}
	return prompt.AlreadyDecided(as)
}

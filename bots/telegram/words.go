package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// shown is what a prompt message showed last.
type shown struct {
	IDs     []string `json:"ids"`               // its calls, pending first
	Digests []string `json:"digests"`           // their digests, as shown
	Pending int      `json:"pending"`           // how many of IDs were pending
	Batch   string   `json:"batch,omitempty"`   // a grouped view's batch
	BDigest string   `json:"bdigest,omitempty"` // and its digest
}

func shownKey(chat int64, msgID int) string {
	return keyShownPrefix + strconv.FormatInt(chat, 10) + "." + strconv.Itoa(msgID)
}

// remember records what message msgID in chat shows now.
func (b *Bot) remember(ctx context.Context, chat int64, msgID int, v gate.View) {
	var s shown
	items := v.Items
	if len(items) == 0 {
		items = []*gate.Approval{v.Approval}
	}
	for _, final := range []bool{false, true} {
		for _, a := range items {
			if a.Status.Final() == final {
				s.IDs, s.Digests = append(s.IDs, a.ID), append(s.Digests, prompt.DigestPrefix(a))
				if !final {
					s.Pending++
				}
			}
		}
	}
	if v.Batch != nil {
		s.Batch, s.BDigest = v.Batch.ID, v.Batch.Digest()
	}
	raw, _ := json.Marshal(s)
	if err := b.g.SetValue(ctx, shownKey(chat, msgID), string(raw)); err != nil && ctx.Err() == nil {
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
	var s shown
	if json.Unmarshal([]byte(raw), &s) != nil || len(s.IDs) == 0 || len(s.IDs) != len(s.Digests) {
		return false
	}
	say := func(text string) { b.reply(ctx, chat, msg.MessageID, text) }
	if !b.authorized(msg.From) {
		if b.admit(ctx, msg) {
			say("You are not an approver here; nothing was decided.")
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
	if s.Batch != "" && s.Pending > 1 {
		if r.Kind == prompt.ReplyAlways {
			say("Always is per call: use a call's buttons, or reply to its own prompt. Nothing was decided.")
			return true
		}
		d := gate.Decision{Approve: r.Kind == prompt.ReplyApprove, Stop: r.Kind == prompt.ReplyStop, Reason: r.Reason, By: by, Via: Name}
		rs, err := b.g.DecideBatch(ctx, s.Batch, s.BDigest, d)
		switch {
		case err == nil:
			say(prompt.BatchOutcome(d.Approve, rs))
		case errors.Is(err, gate.ErrNotFound):
			say(b.outcomes(ctx, s.IDs))
		default:
			b.logger.Error("decide batch from a reply", "batch", s.Batch, "err", err)
			say("Could not record the decision; nothing was decided.")
		}
		return true
	}
	id, digest := s.IDs[0], s.Digests[0]
	var d gate.Decision
	switch r.Kind {
	case prompt.ReplyApprove:
		d = gate.Decision{Approve: true}
	case prompt.ReplyAlways:
		sc, ok := prompt.ScopeChoiceOf(r.Scope)
		if !ok {
			b.askScope(ctx, chat, promptID, msg.MessageID, id)
			return true
		}
		d = prompt.AlwaysDecision(sc, b.now())
	case prompt.ReplyStop:
		d = gate.Decision{Stop: true, Reason: r.Reason}
		if d.Reason == "" {
			d.Reason = "stopped by " + by
		}
	default:
		d = gate.Decision{Reason: r.Reason}
	}
	d.By, d.Via, d.Digest = by, Name, digest
	a, err := b.g.Decide(ctx, id, d)
	switch {
	case err == nil:
		say(prompt.Outcome(a))
	case errors.Is(err, gate.ErrAlreadyDecided) && a != nil:
		say("Already decided: " + prompt.Outcome(a))
	case errors.Is(err, gate.ErrDigestMismatch):
		say("This prompt was made for a different call input; nothing was decided.")
	case errors.Is(err, gate.ErrInvalid):
		say(prompt.VisibleLine("Nothing was decided: " + err.Error()))
	default:
		b.logger.Error("decide from a reply", "approval", id, "err", err)
		say("Could not record the decision; nothing was decided.")
	}
	return true
}

// askScope shows the Always scope step on the prompt, for a reply
// "always" that named no scope.
func (b *Bot) askScope(ctx context.Context, chat int64, promptID, replyID int, id string) {
	a, err := b.g.Get(ctx, id)
	if err != nil || a.Status.Final() {
		b.reply(ctx, chat, replyID, "This call is no longer pending; nothing was decided.")
		return
	}
	if len(a.Evaluation.AlwaysRules) == 0 {
		b.reply(ctx, chat, replyID, "This call has no safe Always pattern; reply \"yes\" to approve it once.")
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
	var lines []string
	for _, id := range ids {
		a, err := b.g.Get(ctx, id)
		if err != nil {
			continue
		}
		lines = append(lines, prompt.Outcome(a))
	}
	if len(lines) == 0 {
		return "Already decided; nothing was changed."
	}
	if len(lines) == 1 {
		return "Already decided: " + lines[0]
	}
	return fmt.Sprintf("Already decided:\n%s", strings.Join(lines, "\n"))
}

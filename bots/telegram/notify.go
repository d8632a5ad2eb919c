package telegram

import (
	"context"
	"fmt"
	"strconv"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/bots/outbox"
	"approvalbot/gate"
)

var _ gate.Notifier = (*Bot)(nil)

// Show implements gate.Notifier: it sends v's prompt to the chat (waiting
// for one to be paired) and says where it went.
func (b *Bot) Show(ctx context.Context, v gate.View) (gate.MessageRef, error) {
	chat, err := b.waitChat(ctx)
	if err != nil {
		return gate.MessageRef{}, fmt.Errorf("telegram show %s: %w", v.Approval.ID, err)
	}
	b.replies.promptBegin()
	defer b.replies.promptEnd()
	text, kb := b.render(v)
	msg := tgbotapi.NewMessage(chat, text)
	msg.ParseMode = tgbotapi.ModeHTML
	msg.DisableWebPagePreview = true
	msg.ReplyMarkup = *kb
	sent, err := b.sendMessage(ctx, chat, msg, plainText(text))
	if err != nil {
		return gate.MessageRef{}, fmt.Errorf("telegram send prompt %s: %w", v.Approval.ID, err)
	}
	b.remember(ctx, chat, sent.MessageID, v)
	return gate.MessageRef{Frontend: Name, ChatID: strconv.FormatInt(chat, 10),
		MessageID: strconv.Itoa(sent.MessageID), SentAt: b.now()}, nil
}

// Update implements gate.Notifier: it edits the message at ref to show v.
func (b *Bot) Update(ctx context.Context, ref gate.MessageRef, v gate.View) error {
	chat, err1 := strconv.ParseInt(ref.ChatID, 10, 64)
	msgID, err2 := strconv.Atoi(ref.MessageID)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("telegram message ref %s/%s: %w", ref.ChatID, ref.MessageID, gate.ErrMessageGone)
	}
	b.replies.promptBegin()
	defer b.replies.promptEnd()
	text, kb := b.render(v)
	if err := b.edit(ctx, chat, msgID, text, kb); err != nil {
		if messageGone(err) {
			return fmt.Errorf("telegram edit %s: %w", v.Approval.ID, gate.ErrMessageGone)
		}
		return fmt.Errorf("telegram edit %s: %w", v.Approval.ID, err)
	}
	b.remember(ctx, chat, msgID, v)
	return nil
}

// sendMessage sends through the outbox. If Telegram rejects the HTML
// (it never should: everything is escaped and cut to fit), it falls back
// to plain, the same lines without the markup (plainText), rather than
// drop the prompt.
func (b *Bot) sendMessage(ctx context.Context, chat int64, msg tgbotapi.MessageConfig, plain string) (tgbotapi.Message, error) {
	var sent tgbotapi.Message
	job := func(ctx context.Context) error {
		m, err := b.send(ctx, "sendMessage", msg)
		if err == nil {
			sent = m
		}
		return err
	}
	err := b.out.Send(ctx, dest(chat), job)
	if err != nil && outbox.IsPermanent(err) && msg.ParseMode != "" {
		b.logger.Error("Telegram rejected a message; resending as plain text", "err", err)
		msg.Text, msg.ParseMode = plain, ""
		err = b.out.Send(ctx, dest(chat), job)
	}
	if err != nil {
		// Send may return on ctx while the job still runs: sent is only
		// safe to read once the job's result has come back.
		return tgbotapi.Message{}, err
	}
	return sent, nil
}

// edit replaces a message's text and keyboard (nil keyboard: none), through
// the outbox. An edit that changes nothing counts as done. If Telegram
// rejects the HTML, the edit is made again in plain text with the same
// keyboard, so an outcome still removes the buttons.
func (b *Bot) edit(ctx context.Context, chat int64, msgID int, text string, kb *tgbotapi.InlineKeyboardMarkup) error {
	e := tgbotapi.NewEditMessageText(chat, msgID, text)
	e.ParseMode = tgbotapi.ModeHTML
	e.DisableWebPagePreview = true
	if kb == nil {
		kb = noKeyboard()
	}
	e.ReplyMarkup = kb
	job := func(ctx context.Context) error {
		err := b.request(ctx, "editMessageText", e)
		if notModified(err) {
			return nil
		}
		return err
	}
	err := b.out.Send(ctx, dest(chat), job)
	if err != nil && outbox.IsPermanent(err) && !messageGone(err) {
		b.logger.Error("Telegram rejected an edit; editing as plain text", "err", err)
		e.Text, e.ParseMode = plainText(text), ""
		err = b.out.Send(ctx, dest(chat), job)
	}
	return err
}

// editMarkup replaces only a message's keyboard, if the approval is still
// pending when the edit's turn comes (so a scope step never brings buttons
// back to a message the gate has just shown an outcome on).
func (b *Bot) editMarkup(ctx context.Context, chat int64, msgID int, id string, kb *tgbotapi.InlineKeyboardMarkup) error {
	e := tgbotapi.NewEditMessageReplyMarkup(chat, msgID, *kb)
	return b.out.Send(ctx, dest(chat), func(ctx context.Context) error {
		if a, err := b.g.Get(ctx, id); err != nil || a.Status.Final() {
			return nil
		}
		err := b.request(ctx, "editMessageReplyMarkup", e)
		if notModified(err) {
			return nil
		}
		return err
	})
}

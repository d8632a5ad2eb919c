package telegram

import (
	"context"
	"fmt"
	"strconv"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/bots/outbox"
	"approvalbot/gate"
	"approvalbot/prompt"
)

// ref returns a's message in chat, if it has one.
func ref(a *gate.Approval, chat int64) (int, bool) {
	c := strconv.FormatInt(chat, 10)
	for i := len(a.Messages) - 1; i >= 0; i-- {
		m := a.Messages[i]
		if m.Frontend == Name && m.ChatID == c {
			id, err := strconv.Atoi(m.MessageID)
			return id, err == nil
		}
	}
	return 0, false
}

// Notify shows a pending approval. After a restart (a.Restarts > 0) it
// edits the message it already sent to say it is still waiting, with
// working buttons; otherwise, or if that message is gone, it sends one.
// A prompt already shown (a ref exists and no restart) is not sent again.
// It waits for a chat to be paired, and retries until ctx ends.
func (b *Bot) Notify(ctx context.Context, a *gate.Approval) error {
	chat, err := b.waitChat(ctx)
	if err != nil {
		return fmt.Errorf("telegram notify %s: %w", a.ID, err)
	}
	if msgID, ok := ref(a, chat); ok {
		if a.Restarts == 0 {
			return nil
		}
		text, kb := b.pendingPrompt(a, waitingLine(b.now()))
		err := b.edit(ctx, chat, msgID, text, kb)
		if err == nil {
			return nil
		}
		if !messageGone(err) {
			return fmt.Errorf("telegram refresh %s: %w", a.ID, err)
		}
		b.logger.Info("prompt message gone; sending it again", "approval", a.ID)
	}
	status := ""
	if a.Restarts > 0 {
		status = waitingLine(b.now())
	}
	_, err = b.sendPrompt(ctx, chat, a, status)
	return err
}

// sendPrompt sends a's prompt to chat and records where it went.
func (b *Bot) sendPrompt(ctx context.Context, chat int64, a *gate.Approval, status string) (int, error) {
	text, kb := b.pendingPrompt(a, status)
	msg := tgbotapi.NewMessage(chat, text)
	msg.ParseMode = tgbotapi.ModeHTML
	msg.DisableWebPagePreview = true
	if kb != nil {
		msg.ReplyMarkup = *kb
	}
	plain, _ := prompt.Truncate(prompt.Build(a, b.now()).Text(), maxMessageLen/2)
	sent, err := b.sendMessage(ctx, chat, msg, plain)
	if err != nil {
		return 0, fmt.Errorf("telegram send prompt %s: %w", a.ID, err)
	}
	r := gate.MessageRef{Frontend: Name, ChatID: strconv.FormatInt(chat, 10), MessageID: strconv.Itoa(sent.MessageID), SentAt: b.now()}
	// The message is out; losing its ref would leave it unedited forever,
	// so keep trying while ctx lasts.
	for attempt := 0; ; attempt++ {
		_, err := b.g.AddMessageRef(ctx, a.ID, r)
		if err == nil {
			return sent.MessageID, nil
		}
		if ctx.Err() != nil {
			return sent.MessageID, fmt.Errorf("telegram record message of %s: %w", a.ID, err)
		}
		b.logger.Error("record message ref", "approval", a.ID, "err", err)
		if sleepCtx(ctx, refBackoff(attempt)) != nil {
			return sent.MessageID, ctx.Err()
		}
	}
}

// refBackoff is the wait before retrying a store write: 200ms doubling to 10s.
func refBackoff(attempt int) time.Duration {
	d := 200 * time.Millisecond
	for range attempt {
		if d *= 2; d >= 10*time.Second {
			return 10 * time.Second
		}
	}
	return d
}

// sendMessage sends through the outbox. If Telegram rejects the HTML
// (it never should: everything is escaped), it falls back to plain text
// rather than drop the prompt.
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
// the outbox. An edit that changes nothing counts as done.
func (b *Bot) edit(ctx context.Context, chat int64, msgID int, text string, kb *tgbotapi.InlineKeyboardMarkup) error {
	e := tgbotapi.NewEditMessageText(chat, msgID, text)
	e.ParseMode = tgbotapi.ModeHTML
	e.DisableWebPagePreview = true
	if kb == nil {
		kb = noKeyboard()
	}
	e.ReplyMarkup = kb
	err := b.out.Send(ctx, dest(chat), func(ctx context.Context) error {
		err := b.request(ctx, "editMessageText", e)
		if notModified(err) {
			return nil
		}
		return err
	})
	return err
}

// editMarkup replaces only a message's keyboard.
func (b *Bot) editMarkup(ctx context.Context, chat int64, msgID int, kb *tgbotapi.InlineKeyboardMarkup) error {
	if kb == nil {
		kb = noKeyboard()
	}
	e := tgbotapi.NewEditMessageReplyMarkup(chat, msgID, *kb)
	return b.out.Send(ctx, dest(chat), func(ctx context.Context) error {
		err := b.request(ctx, "editMessageReplyMarkup", e)
		if notModified(err) {
			return nil
		}
		return err
	})
}

func msgKey(chat int64, msgID int) string {
	return strconv.FormatInt(chat, 10) + ":" + strconv.Itoa(msgID)
}

// Resolved edits every Telegram message of a final approval to show its
// outcome and removes the buttons.
func (b *Bot) Resolved(ctx context.Context, a *gate.Approval) error {
	var firstErr error
	for _, m := range a.Messages {
		if m.Frontend != Name {
			continue
		}
		chat, err1 := strconv.ParseInt(m.ChatID, 10, 64)
		msgID, err2 := strconv.Atoi(m.MessageID)
		if err1 != nil || err2 != nil {
			b.logger.Warn("bad message ref", "approval", a.ID, "chat", m.ChatID, "message", m.MessageID)
			continue
		}
		key := msgKey(chat, msgID)
		b.mu.Lock()
		done := b.finalized[key] == a.Status
		delete(b.finalized, key)
		b.mu.Unlock()
		if done {
			continue // the press handler already showed this outcome here
		}
		text, kb := b.finalPrompt(a)
		if err := b.edit(ctx, chat, msgID, text, kb); err != nil {
			if messageGone(err) {
				continue
			}
			b.logger.Error("show outcome", "approval", a.ID, "err", err)
			if firstErr == nil {
				firstErr = fmt.Errorf("telegram show outcome of %s: %w", a.ID, err)
			}
		}
	}
	return firstErr
}

// showFinal edits one message to a's outcome, remembering it so Resolved
// does not repeat the edit.
func (b *Bot) showFinal(ctx context.Context, chat int64, msgID int, a *gate.Approval) {
	b.mu.Lock()
	b.finalized[msgKey(chat, msgID)] = a.Status
	b.mu.Unlock()
	text, kb := b.finalPrompt(a)
	if err := b.edit(ctx, chat, msgID, text, kb); err != nil && !messageGone(err) {
		b.logger.Error("show outcome", "approval", a.ID, "err", err)
	}
}

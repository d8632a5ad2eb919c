package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/backoff"
	"approvalbot/gate"
	"approvalbot/prompt"
)

// answer answers a callback query (the spinner on the button stops), with
// an alert for anything the presser must read. It is sent at once, not
// through the outbox: Telegram expects it within seconds.
func (b *Bot) answer(ctx context.Context, q *tgbotapi.CallbackQuery, text string, alert bool) {
	text, _ = prompt.Truncate(text, maxAnswerText)
	c := tgbotapi.NewCallback(q.ID, text)
	c.ShowAlert = alert
	// Telegram expects the answer within seconds: three tries at most.
	tries := 0
	err := backoff.Retry(ctx, backoff.Default, func(ctx context.Context) error {
		tries++
		return b.request(ctx, "answerCallbackQuery", c)
	}, func(err error) bool { return tries >= 3 || errPermanent(err) != nil },
		func(err error, _ time.Duration) { b.logger.Warn("answerCallbackQuery failed", "err", err) })
	if err != nil && ctx.Err() == nil {
		b.logger.Warn("answerCallbackQuery failed", "err", err)
	}
}

// errPermanent returns err if it is a 4xx the API will repeat, else nil.
func errPermanent(err error) error {
	var e *apiError
	if errors.As(err, &e) && e.code >= 400 && e.code < 500 && e.code != 429 {
		return err
	}
	return nil
}

// onCallback handles a button press. Every answer is computed from the
// gate, so buttons sent before a restart work the same.
func (b *Bot) onCallback(ctx context.Context, q *tgbotapi.CallbackQuery) {
	cb, ok := parseCallback(q.Data)
	if q.From == nil {
		return // channel posts have no presser; nothing to authorize
	}
	if !ok {
		b.answer(ctx, q, "Unknown button.", true)
		return
	}
	var chat int64
	var msgID int
	if q.Message != nil && q.Message.Chat != nil {
		chat, msgID = q.Message.Chat.ID, q.Message.MessageID
	}
	log := b.logger.With("approval", cb.id, "op", cb.op, "user", q.From.ID)

	if cb.op == opRevoke {
		b.onRevokePress(ctx, q, cb.id, chat, msgID)
		return
	}
	if cb.op == opApproveAll || cb.op == opDenyAll {
		b.onBatchPress(ctx, q, cb)
		return
	}
	a, err := b.g.Get(ctx, cb.id)
	if errors.Is(err, gate.ErrNotFound) || errors.Is(err, gate.ErrInvalid) {
		b.answer(ctx, q, "This approval is unknown (deleted or from another approvalbot).", true)
		return
	}
	if err != nil {
		log.Error("load approval for press", "err", err)
		b.answer(ctx, q, "Could not load the approval; nothing was decided. Try again.", true)
		return
	}
	if !prompt.DigestMatches(a, cb.digest) {
		log.Warn("press for another digest", "have", prompt.DigestPrefix(a), "pressed", cb.digest)
		b.answer(ctx, q, "This button was made for a different call input; nothing was decided.", true)
		return
	}
	if cb.op == opFull {
		b.answer(ctx, q, "Sending the whole content as a file.", false)
		b.sendFull(ctx, chat, msgID, a)
		return
	}
	if !b.authorized(q.From) {
		log.Warn("press by a user who is not an approver")
		b.answer(ctx, q, "You are not an approver here; nothing was decided.", true)
		return
	}
	if a.Status.Final() {
		b.answer(ctx, q, "Already decided: "+prompt.Outcome(a), true)
		b.refresh(ctx, chat, msgID, a)
		return
	}

	switch cb.op {
	case opAlways:
		b.answer(ctx, q, prompt.ScopeQuestion(prompt.Build(a, b.now())), false)
		b.async(ctx, func(ctx context.Context) {
			if err := b.editMarkup(ctx, chat, msgID, a.ID, scopeKeyboard(a)); err != nil {
				log.Error("show Always scopes", "err", err)
			}
		})
		return
	case opBack:
		b.answer(ctx, q, "", false)
		b.async(ctx, func(ctx context.Context) {
			_, kb := b.render(gate.View{Approval: a})
			if err := b.editMarkup(ctx, chat, msgID, a.ID, kb); err != nil {
				log.Error("restore buttons", "err", err)
			}
		})
		return
	case opReason:
		b.answer(ctx, q, "Reply to my next message with the reason.", false)
		b.askReason(ctx, q, chat, msgID, a)
		return
	}
	kinds := map[string]prompt.ChoiceKind{opApprove: prompt.ChoiceApprove, opDeny: prompt.ChoiceDeny, opStop: prompt.ChoiceStop}
	reason := ""
	if cb.op == opStop {
		reason = "stopped by " + who(q.From)
	}
	d := prompt.Decision(kinds[cb.op], "", reason)
	if sc, ok := prompt.ScopeChoiceOf(opScopes[cb.op]); ok {
		d = prompt.AlwaysDecision(sc, b.now())
	}
	d.By, d.Via, d.Digest = who(q.From), Name, cb.digest
	b.decide(ctx, q, chat, msgID, a.ID, d)
}

// opScopes are the Always choices (keys) of the scope step's operations.
var opScopes = map[string]string{opAlwaysSession: prompt.ScopeKeySession, opAlwaysAgent: prompt.ScopeKeyAgent,
	opAlwaysHour: prompt.ScopeKeyHour, opAlwaysToday: prompt.ScopeKeyToday}

// refresh edits the pressed message to a's state, for a press on a message
// that still looked live (the gate edits every message it knows of; this
// heals one it could not).
func (b *Bot) refresh(ctx context.Context, chat int64, msgID int, a *gate.Approval) {
	if chat == 0 || msgID == 0 || inGroup(a, chat, msgID) {
		return // a grouped view is the gate's to edit
	}
	ref := gate.MessageRef{Frontend: Name, ChatID: strconv.FormatInt(chat, 10), MessageID: strconv.Itoa(msgID)}
	b.async(ctx, func(ctx context.Context) {
		if err := b.Update(ctx, ref, gate.View{Approval: a}); err != nil && !errors.Is(err, gate.ErrMessageGone) {
			b.logger.Error("show outcome", "approval", a.ID, "err", err)
		}
	})
}

// decide records d and answers the press with the result.
func (b *Bot) decide(ctx context.Context, q *tgbotapi.CallbackQuery, chat int64, msgID int, id string, d gate.Decision) {
	a, err := b.g.Decide(ctx, id, d)
	switch {
	case err == nil:
		// The gate edits the prompt to the outcome, on every frontend.
		if q != nil {
			b.answer(ctx, q, prompt.Outcome(a), false)
		}
		b.logger.Info("decided", "approval", id, "status", a.Status, "by", d.By)
	case errors.Is(err, gate.ErrAlreadyDecided):
		text := "Already decided."
		if a != nil {
			text = "Already decided: " + prompt.Outcome(a)
		}
		if q != nil {
			b.answer(ctx, q, text, true)
		} else {
			b.reply(ctx, chat, 0, text)
		}
	case errors.Is(err, gate.ErrDigestMismatch):
		if q != nil {
			b.answer(ctx, q, "This button was made for a different call input; nothing was decided.", true)
		}
	default:
		b.logger.Error("decide", "approval", id, "err", err)
		text := "Could not record the decision: " + err.Error()
		if q != nil {
			b.answer(ctx, q, text, true)
		} else {
			b.reply(ctx, chat, 0, text)
		}
	}
}

// async runs f in the background (edits that may wait behind the outbox),
// so the update loop stays responsive. Run waits for it before returning.
func (b *Bot) async(ctx context.Context, f func(ctx context.Context)) {
	b.tasks.Add(1)
	go func() {
		defer b.tasks.Done()
		f(ctx)
	}()
}

// sendFull sends the whole prompt as a text document, replying to the prompt.
func (b *Bot) sendFull(ctx context.Context, chat int64, msgID int, a *gate.Approval) {
	if chat == 0 {
		return
	}
	text := prompt.Build(a, b.now()).Text()
	doc := tgbotapi.NewDocument(chat, tgbotapi.FileBytes{Name: "approval-" + a.ID + ".txt", Bytes: []byte(text)})
	doc.ReplyToMessageID = msgID
	doc.Caption = "Full content of approval " + a.ID
	b.async(ctx, func(ctx context.Context) {
		err := b.out.Send(ctx, dest(chat), func(ctx context.Context) error {
			_, err := b.send(ctx, "sendDocument", doc)
			return err
		})
		if err != nil {
			b.logger.Error("send full content", "approval", a.ID, "err", err)
		}
	})
}

// askReason sends a ForceReply prompt for the deny reason and remembers,
// durably, which approval a reply to it is for.
func (b *Bot) askReason(ctx context.Context, q *tgbotapi.CallbackQuery, chat int64, promptID int, a *gate.Approval) {
	if chat == 0 {
		return
	}
	text := "Reason for denying " + a.ID + " (" + prompt.VisibleLine(a.Tool) + "): reply to this message."
	if q.From != nil && q.From.UserName != "" {
		text = "@" + q.From.UserName + " " + text // Selective ForceReply targets mentioned users
	}
	msg := tgbotapi.NewMessage(chat, text)
	msg.ReplyToMessageID = promptID
	placeholder, _ := prompt.Truncate("Why deny "+a.ID+"?", maxPlaceholder)
	msg.ReplyMarkup = tgbotapi.ForceReply{ForceReply: true, Selective: true, InputFieldPlaceholder: placeholder}
	b.async(ctx, func(ctx context.Context) {
		sent, err := b.sendMessage(ctx, chat, msg, text)
		if err != nil {
			b.logger.Error("ask for a deny reason", "approval", a.ID, "err", err)
			return
		}
		v := a.ID + " " + prompt.DigestPrefix(a) + " " + strconv.Itoa(promptID)
		if err := b.g.SetValue(ctx, reasonKey(chat, sent.MessageID), v); err != nil {
			b.logger.Error("remember deny-reason prompt", "approval", a.ID, "err", err)
		}
	})
}

func reasonKey(chat int64, msgID int) string {
	return fmt.Sprintf("%s%d.%d", keyReasonPrefix, chat, msgID)
}

// onReasonReply takes a reply to a ForceReply prompt as the deny reason.
// It reports whether msg was such a reply.
func (b *Bot) onReasonReply(ctx context.Context, msg *tgbotapi.Message) bool {
	if msg.ReplyToMessage == nil {
		return false
	}
	key := reasonKey(msg.Chat.ID, msg.ReplyToMessage.MessageID)
	v, err := b.g.Value(ctx, key)
	if err != nil {
		if !errors.Is(err, gate.ErrNotFound) {
			b.logger.Error("load deny-reason prompt", "err", err)
		}
		return false
	}
	parts := strings.Fields(v)
	if len(parts) != 3 {
		b.logger.Warn("bad stored deny-reason prompt", "key", key)
		return false
	}
	if !b.authorized(msg.From) {
		if b.admit(ctx, msg) {
			b.reply(ctx, msg.Chat.ID, msg.MessageID, "You are not an approver here; nothing was decided.")
		}
		return true
	}
	promptID, _ := strconv.Atoi(parts[2])
	reason := strings.TrimSpace(msg.Text)
	if reason == "" {
		reason = "denied without a reason"
	}
	reason, _ = prompt.Truncate(reason, 1000)
	b.decide(ctx, nil, msg.Chat.ID, promptID, parts[0], gate.Decision{Reason: reason, By: who(msg.From), Via: Name, Digest: parts[1]})
	if err := b.g.SetValue(ctx, key, ""); err != nil {
		b.logger.Error("forget deny-reason prompt", "err", err)
	}
	return true
}

package telegram

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/gate"
	"approvalbot/prompt"
)

const helpText = `<b>approvalbot</b>
Buttons on a prompt: ✅ Approve once, ♾ Always (saves the pattern shown, for this session, or for this agent for an hour, today or with no expiry), ❌ Deny, 💬 Deny with reason, 🛑 Stop (deny and stop the agent's turn). Several calls of one session come as one message with ✅ Approve all and ❌ Deny all.
Or reply to a prompt in words: yes / ok / lgtm / 👍, always, no, "no, REASON", stop.

/pending: show every pending approval again
/rules: list Always rules, with a revoke button each
/revoke ID: remove an Always rule
/mode AGENT interactive|strict|approve_all: set an agent's mode
/pair CODE: send prompts to this chat (the code is printed by approvalbot serve)
/help: this text`

// maxListedRules bounds /rules, to keep the message and keyboard in limits.
const maxListedRules = 40

// reply sends a short HTML-free text to chat in the background, queued
// behind prompts (replies.go).
func (b *Bot) reply(ctx context.Context, chat int64, replyTo int, text string) {
	b.replyHTML(ctx, chat, replyTo, esc(text), nil)
}

func (b *Bot) replyHTML(ctx context.Context, chat int64, replyTo int, html string, kb *tgbotapi.InlineKeyboardMarkup) {
	if chat == 0 {
		return
	}
	msg := tgbotapi.NewMessage(chat, html)
	msg.ParseMode = tgbotapi.ModeHTML
	msg.DisableWebPagePreview = true
	msg.ReplyToMessageID = replyTo
	msg.AllowSendingWithoutReply = true // the message replied to may be gone
	if kb != nil {
		msg.ReplyMarkup = *kb
	}
	b.queueReply(ctx, chat, msg, plainText(html), "")
}

// command splits "/cmd@bot args" and reports whether it is addressed to us.
func (b *Bot) command(text string) (string, []string, bool) {
	if !strings.HasPrefix(text, "/") {
		return "", nil, false
	}
	fields := strings.Fields(text)
	name, at, hasAt := strings.Cut(strings.TrimPrefix(fields[0], "/"), "@")
	if hasAt {
		b.mu.Lock()
		me := b.username
		b.mu.Unlock()
		if !strings.EqualFold(at, me) {
			return "", nil, false
		}
	}
	return strings.ToLower(name), fields[1:], true
}

// onMessage handles a text message: a deny reason or a command.
func (b *Bot) onMessage(ctx context.Context, msg *tgbotapi.Message) {
	if msg.Chat == nil || msg.From == nil || msg.From.IsBot {
		return
	}
	if b.onReasonReply(ctx, msg) || b.onWordsReply(ctx, msg) {
		return
	}
	name, args, ok := b.command(msg.Text)
	if !ok {
		return
	}
	if !(name == "pair" && b.authorized(msg.From)) && !b.admit(ctx, msg) {
		return // a stranger answered within the last minute: ignored
	}
	chat := msg.Chat.ID
	if name == "pair" {
		b.onPair(ctx, msg, args)
		return
	}
	if name == "help" || name == "start" {
		b.replyHTML(ctx, chat, 0, helpText, nil)
		return
	}
	if bound := b.chat(ctx); bound == 0 || chat != bound {
		// Other chats learn nothing about approvals.
		b.reply(ctx, chat, msg.MessageID, "This chat is not the approvalbot chat. An approver can bind it with /pair CODE.")
		return
	}
	switch name {
	case "pending":
		b.onPending(ctx, chat)
	case "rules":
		b.onRules(ctx, chat, 0)
	case "revoke":
		if !b.authorized(msg.From) {
			b.reply(ctx, chat, msg.MessageID, "Only an approver may revoke rules.")
			return
		}
		if len(args) != 1 {
			b.reply(ctx, chat, msg.MessageID, "Usage: /revoke RULE_ID (see /rules)")
			return
		}
		b.reply(ctx, chat, msg.MessageID, b.revoke(ctx, args[0], msg.From))
	case "mode":
		if !b.authorized(msg.From) {
			b.reply(ctx, chat, msg.MessageID, "Only an approver may change modes.")
			return
		}
		b.reply(ctx, chat, msg.MessageID, b.setMode(ctx, args, msg.From))
	default:
		b.reply(ctx, chat, msg.MessageID, "Unknown command. /help lists them.")
	}
}

// onPair binds the chat the message came from, if the code is right and
// the sender is an approver.
func (b *Bot) onPair(ctx context.Context, msg *tgbotapi.Message, args []string) {
	chat := msg.Chat.ID
	if b.cfg.ChatID != 0 {
		b.reply(ctx, chat, msg.MessageID, "The chat is fixed by APPROVALBOT_TELEGRAM_CHAT_ID; pairing is off.")
		return
	}
	if !b.authorized(msg.From) {
		b.logger.Warn("pair attempt by a user who is not an approver", "user", msg.From.ID, "chat", chat)
		b.reply(ctx, chat, msg.MessageID, fmt.Sprintf("Only an approver may pair a chat. Your user id is %d.", msg.From.ID))
		return
	}
	b.mu.Lock()
	code := b.code
	b.mu.Unlock()
	if len(args) != 1 || subtle.ConstantTimeCompare([]byte(strings.ToUpper(args[0])), []byte(code)) != 1 {
		b.logger.Warn("pair attempt with a wrong code", "user", msg.From.ID, "chat", chat)
		b.reply(ctx, chat, msg.MessageID, "Wrong or used pairing code. approvalbot serve prints the current one.")
		return
	}
	if err := b.setChat(ctx, chat); err != nil {
		b.logger.Error("pair", "err", err)
		b.reply(ctx, chat, msg.MessageID, "Could not store the pairing; try again.")
		return
	}
	b.logger.Info("chat paired", "chat", chat, "by", who(msg.From))
	b.reply(ctx, chat, msg.MessageID, "Paired: approval prompts now come to this chat. /help lists the commands.")
}

// maxPendingLines bounds /pending's list; approvalbot pending lists all.
const maxPendingLines = 20 // of at most ~170 units each: within maxMessageLen

// onPending answers with one message listing the pending approvals (the
// gate keeps the prompts themselves current), as a reply to the oldest
// one's prompt in this chat, so it is one tap away. A /pending while an
// earlier one's answer is still queued adds nothing.
func (b *Bot) onPending(ctx context.Context, chat int64) {
	as, err := b.g.List(ctx, gate.StatusPending)
	if err != nil {
		b.logger.Error("list pending", "err", err)
		b.reply(ctx, chat, 0, "Could not list pending approvals.")
		return
	}
	if len(as) == 0 {
		b.reply(ctx, chat, 0, "No pending approvals.")
		return
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "<b>⏳ %d pending</b>\n", len(as))
	replyTo := 0
	for i, a := range as {
		if i == maxPendingLines {
			fmt.Fprintf(&sb, "… and %d more (approvalbot pending)\n", len(as)-i)
			break
		}
		if replyTo == 0 {
			replyTo = promptIn(a, chat)
		}
		c := prompt.Build(a, b.now())
		line := c.Title
		if len(c.Risks) > 0 {
			line += " (" + strings.Join(c.Risks, ", ") + ")"
		}
		text, _ := capped(line, 100)
		id, _ := capped(a.ID, 40)
		sb.WriteString("• <code>" + id + "</code>: " + text + "\n")
	}
	msg := tgbotapi.NewMessage(chat, sb.String())
	msg.ParseMode = tgbotapi.ModeHTML
	msg.DisableWebPagePreview = true
	msg.ReplyToMessageID = replyTo
	msg.AllowSendingWithoutReply = true
	b.queueReply(ctx, chat, msg, plainText(sb.String()), "pending:"+strconv.FormatInt(chat, 10))
}

// promptIn is the id of a's prompt message in chat, or 0.
func promptIn(a *gate.Approval, chat int64) int {
	c := strconv.FormatInt(chat, 10)
	for _, m := range a.Messages {
		if m.Frontend == Name && m.ChatID == c {
			id, _ := strconv.Atoi(m.MessageID)
			return id
		}
	}
	return 0
}

// rulesMessage lists Always rules with a revoke button each.
func (b *Bot) rulesMessage(ctx context.Context) (string, *tgbotapi.InlineKeyboardMarkup, error) {
	rules, err := b.g.Rules(ctx, "")
	if err != nil {
		return "", nil, err
	}
	if len(rules) == 0 {
		return "No Always rules.", noKeyboard(), nil
	}
	var sb strings.Builder
	sb.WriteString("<b>Always rules</b>\n")
	var rows [][]tgbotapi.InlineKeyboardButton
	for i, r := range rules {
		if i == maxListedRules {
			fmt.Fprintf(&sb, "… and %d more (approvalbot rules list)\n", len(rules)-i)
			break
		}
		line := fmt.Sprintf("%s: %s %s %s [%s]", r.ID, r.Agent, r.Tool, r.Pattern, prompt.RuleLifetime(r, b.now()))
		line, _ = prompt.Truncate(prompt.VisibleLine(line), 90)
		sb.WriteString("• <code>" + esc(line) + "</code>\n")
		if data := opRevoke + ":" + r.ID; len(data) <= maxCallbackData {
			rows = append(rows, []tgbotapi.InlineKeyboardButton{button(label("🗑 Revoke "+r.Tool+" "+r.Pattern), data)})
		}
	}
	kb := tgbotapi.NewInlineKeyboardMarkup(rows...)
	return sb.String(), &kb, nil
}

// onRules sends the rules list, or edits message msgID to it.
func (b *Bot) onRules(ctx context.Context, chat int64, msgID int) {
	text, kb, err := b.rulesMessage(ctx)
	if err != nil {
		b.logger.Error("list rules", "err", err)
		b.reply(ctx, chat, 0, "Could not list rules.")
		return
	}
	if msgID != 0 {
		b.async(ctx, func(ctx context.Context) {
			if err := b.edit(ctx, chat, msgID, text, kb); err != nil {
				b.logger.Error("refresh rules list", "err", err)
			}
		})
		return
	}
	b.replyHTML(ctx, chat, 0, text, kb)
}

// revoke removes a rule and says what happened.
func (b *Bot) revoke(ctx context.Context, id string, by *tgbotapi.User) string {
	r, err := b.g.RemoveRule(ctx, id, who(by))
	switch {
	case errors.Is(err, gate.ErrNotFound):
		return "No rule " + id + "."
	case err != nil:
		b.logger.Error("revoke rule", "rule", id, "err", err)
		return "Could not revoke " + id + "."
	}
	b.logger.Info("rule revoked", "rule", id, "by", who(by))
	return prompt.VisibleLine(fmt.Sprintf("Revoked %s: %s %s %s.", r.ID, r.Agent, r.Tool, r.Pattern))
}

func (b *Bot) onRevokePress(ctx context.Context, q *tgbotapi.CallbackQuery, ruleID string, chat int64, msgID int) {
	if !b.authorized(q.From) {
		b.answer(ctx, q, "You are not an approver here; nothing was changed.", true)
		return
	}
	b.answer(ctx, q, b.revoke(ctx, ruleID, q.From), false)
	if chat != 0 && msgID != 0 {
		b.onRules(ctx, chat, msgID)
	}
}

// setMode handles /mode AGENT MODE.
func (b *Bot) setMode(ctx context.Context, args []string, by *tgbotapi.User) string {
	const usage = "Usage: /mode AGENT interactive|strict|approve_all"
	if len(args) != 2 {
		return usage
	}
	agent, m := args[0], gate.Mode(strings.ToLower(args[1]))
	if !m.Valid() {
		return usage
	}
	if err := b.g.SetMode(ctx, agent, m, who(by)); err != nil {
		b.logger.Error("set mode", "agent", agent, "err", err)
		return prompt.VisibleLine("Could not set the mode: " + err.Error())
	}
	b.logger.Info("mode set", "agent", agent, "mode", m, "by", who(by))
	return prompt.VisibleLine(fmt.Sprintf("Mode of %s is now %s.", agent, m))
}

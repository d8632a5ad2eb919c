package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// Grouped views (gate.View with Items): one message lists every call of
// an agent session, pending ones in full, with a row of single-call
// buttons each and "Approve all N" / "Deny all", whose data carries the
// gate's batch id and digest (the batch's members are kept by the gate:
// callback data has room for 64 bytes only).

// Callback operations on a batch: "op:batchID:batchDigest".
const (
	opApproveAll = "A"
	opDenyAll    = "D"
)

// batchData is a batch button's data, or "" if it would not fit.
func batchData(op string, b *gate.Batch) string {
	digest := b.Digest()
	if len(digest) > prompt.BatchDigestLen {
		digest = digest[:prompt.BatchDigestLen]
	}
	d := op + ":" + b.ID + ":" + digest
	if len(d) > maxCallbackData {
		return ""
	}
	return d
}

// Groups implements gate.GroupNotifier.
func (b *Bot) Groups() bool { return !b.cfg.NoGroups }

// itemOps are the callback operations of a grouped view's item choices.
var itemIcons = map[prompt.ChoiceKind]string{prompt.ChoiceApprove: "✅", prompt.ChoiceDeny: "❌", prompt.ChoiceDenyReason: "💬"}

// renderGroup lays out a grouped view and its keyboard.
func (b *Bot) renderGroup(v gate.View) (string, *tgbotapi.InlineKeyboardMarkup) {
	g := prompt.BuildGroup(v, b.now())
	var head strings.Builder
	if g.Note != "" {
		head.WriteString("⏳ <b>" + esc(g.Note) + "</b>\n\n")
	}
	icon := "🔐"
	if g.Pending == 0 {
		icon = "☑️"
	}
	head.WriteString("<b>" + icon + " " + esc(g.Title) + "</b>\n")
	for _, f := range g.Fields {
		head.WriteString(esc(f.Name) + ": <code>" + esc(f.Value) + "</code>\n")
	}
	// Everything but the pending bodies, then the bodies share what is left.
	parts := make([]string, len(g.Items))
	cut := map[int]bool{}
	var bodies []int
	fixed := textLen(head.String())
	for i, it := range g.Items {
		var s strings.Builder
		a := it.Approval
		if a.Status.Final() {
			line, _ := prompt.Truncate(it.Content.Body, 60)
			s.WriteString("\n" + prompt.Icon(a.Status) + " <b>" + esc(it.Heading()) + "</b>")
			if line != "" {
				s.WriteString(" <code>" + esc(strings.ReplaceAll(line, "\n", " ")) + "</code>")
			}
			s.WriteString("\n")
		} else {
			// Lines are cut as a single prompt's are at its tightest cap.
			lc := lineCaps[len(lineCaps)-1]
			one := func(v string) string {
				e, c := capped(v, lc)
				cut[i] = cut[i] || c
				return e
			}
			s.WriteString("\n<b>" + one(it.Heading()) + "</b>\n")
			for _, r := range it.Content.Risks {
				s.WriteString("⚠️ <b>" + one(r) + "</b>\n")
			}
			for _, w := range it.Content.Warnings {
				s.WriteString("⚠️ <b>" + one(w) + "</b>\n")
			}
			for _, f := range it.ItemFields() {
				s.WriteString(esc(f.Name) + ": <code>" + one(f.Value) + "</code>\n")
			}
			if it.Content.Body != "" {
				bodies = append(bodies, i)
				fixed += textLen("<pre></pre>\n")
			}
		}
		parts[i] = s.String()
		fixed += textLen(parts[i])
	}
	if len(bodies) > 0 {
		share := (maxMessageLen - fixed) / len(bodies)
		for _, i := range bodies {
			body := g.Items[i].Content.Body
			html, missing := fitEscaped(body, share)
			if missing > 0 {
				marker := esc(prompt.CutMarker(missing)) + " 📄"
				html, missing = fitEscaped(body, share-textLen(marker)-10)
				html += esc(prompt.CutMarker(missing)) + " 📄"
				cut[i] = true
			}
			parts[i] += "<pre>" + html + "</pre>\n"
		}
	}
	text := strings.TrimSuffix(head.String()+strings.Join(parts, ""), "\n")
	return text, groupKeyboard(g, cut)
}

// groupKeyboard is a grouped view's keyboard: a row per pending call,
// then the batch row.
func groupKeyboard(g prompt.Group, cut map[int]bool) *tgbotapi.InlineKeyboardMarkup {
	if g.Pending == 1 {
		// One call left: its own prompt's buttons (Always, Stop, ...).
		for i, it := range g.Items {
			if !it.Approval.Status.Final() {
				if kb := promptKeyboard(it.Approval, it.Content, cut[i]); kb != nil {
					return kb
				}
			}
		}
	}
	var rows [][]tgbotapi.InlineKeyboardButton
	for i, it := range g.Items {
		a := it.Approval
		if a.Status.Final() || callbackData(opApprove, a) == "" {
			continue
		}
		var row []tgbotapi.InlineKeyboardButton
		for _, k := range prompt.ItemChoices {
			row = append(row, button(fmt.Sprintf("%s %d", itemIcons[k], it.N), callbackData(choiceOps[k], a)))
		}
		if cut[i] {
			row = append(row, button(fmt.Sprintf("📄 %d", it.N), callbackData(opFull, a)))
		}
		rows = append(rows, row)
	}
	var batch []tgbotapi.InlineKeyboardButton
	for _, ch := range g.BatchChoices() {
		op, icon := opApproveAll, "✅ "
		if ch.Kind == prompt.ChoiceDenyAll {
			op, icon = opDenyAll, "❌ "
		}
		if d := batchData(op, g.Batch); d != "" {
			batch = append(batch, button(icon+ch.Label, d))
		}
	}
	if len(batch) > 0 {
		rows = append(rows, batch)
	}
	if len(rows) == 0 {
		return noKeyboard()
	}
	m := tgbotapi.NewInlineKeyboardMarkup(rows...)
	return &m
}

// onBatchPress handles Approve all / Deny all: it decides exactly the
// calls of the batch the pressed view was rendered with.
func (b *Bot) onBatchPress(ctx context.Context, q *tgbotapi.CallbackQuery, cb callback) {
	if !b.authorized(q.From) {
		b.logger.Warn("batch press by a user who is not an approver", "batch", cb.id, "user", q.From.ID)
		b.answer(ctx, q, "You are not an approver here; nothing was decided.", true)
		return
	}
	approve := cb.op == opApproveAll
	kind := prompt.ChoiceDenyAll
	if approve {
		kind = prompt.ChoiceApproveAll
	}
	d := prompt.BatchDecision(kind)
	d.By, d.Via = who(q.From), Name
	rs, err := b.g.DecideBatch(ctx, cb.id, cb.digest, d)
	switch {
	case err == nil:
		b.logger.Info("batch decided", "batch", cb.id, "calls", len(rs), "by", d.By)
		b.answer(ctx, q, prompt.BatchOutcome(approve, rs), false)
	case errors.Is(err, gate.ErrNotFound):
		b.answer(ctx, q, "Every call of this batch is already decided; nothing was changed.", true)
	case errors.Is(err, gate.ErrDigestMismatch), errors.Is(err, gate.ErrInvalid):
		b.answer(ctx, q, "This button was made for other calls; nothing was decided.", true)
	default:
		b.logger.Error("decide batch", "batch", cb.id, "err", err)
		b.answer(ctx, q, "Could not record the decision; nothing was decided. Try again.", true)
	}
}

// inGroup reports whether a's message msgID in chat is a grouped view.
func inGroup(a *gate.Approval, chat int64, msgID int) bool {
	for _, m := range a.Messages {
		if m.Frontend == Name && m.Group != "" && m.ChatID == fmt.Sprint(chat) && m.MessageID == fmt.Sprint(msgID) {
			return true
		}
	}
	return false
}

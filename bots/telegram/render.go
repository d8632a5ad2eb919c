package telegram

import (
	"fmt"
	htmlpkg "html"
	"regexp"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// esc escapes agent text for HTML parse mode. Every piece of text that is
// not our own markup goes through it.
func esc(s string) string { return htmlpkg.EscapeString(s) }

// textLen counts s as the length limit is checked: UTF-16 units.
func textLen(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// fitEscaped escapes as much of s as fits in budget units and reports
// whether it had to cut, and how many runes it left out.
func fitEscaped(s string, budget int) (string, int) {
	var b strings.Builder
	used := 0
	total := 0
	for i, r := range s {
		e := esc(string(r))
		n := textLen(e)
		if used+n > budget {
			for range s[i:] {
				total++
			}
			return b.String(), total
		}
		used += n
		b.WriteString(e)
	}
	return b.String(), 0
}

// rendered is a message ready to send.
type rendered struct {
	HTML string
	Cut  bool // the body or a line was cut: offer the Full button
}

// Caps on a prompt's lines other than the body, in units of escaped HTML,
// so that whatever the agent sent (a 4 KB first sub-command, a long cwd,
// a hundred Always patterns) the lines a person must see (risk labels,
// warnings, asked by, deadline, ID, Always) fit in one message with room
// left for the start of the body. renderPrompt tries each line cap in
// turn until the fixed part leaves minBodyRoom.
var lineCaps = []int{300, 120, 60}

const (
	maxWarningLines = 10  // risk labels and warnings shown; the rest are counted
	minBodyRoom     = 600 // units left for the body at the loosest cap that allows it
)

// capped escapes s and cuts it to at most n units, ending it with "…";
// cut reports whether it had to.
func capped(s string, n int) (string, bool) {
	e, missing := fitEscaped(s, n)
	if missing == 0 {
		return e, false
	}
	e, _ = fitEscaped(s, n-1)
	return e + "…", true
}

// promptLines lays out everything of c but the body, each line cut to
// lineCap units: head goes above the body, tail (the Always line) below.
func promptLines(c prompt.Content, status string, lineCap int) (head, tail string, cut bool) {
	var h strings.Builder
	one := func(s string, n int) string {
		e, wasCut := capped(s, n)
		cut = cut || wasCut
		return e
	}
	if status != "" {
		h.WriteString(status + "\n\n")
	}
	h.WriteString("<b>🔐 " + one(c.Title, lineCap) + "</b>\n")
	warnings := append(append([]string(nil), c.Risks...), c.Warnings...)
	for i, w := range warnings {
		if i == maxWarningLines {
			fmt.Fprintf(&h, "⚠️ <b>… and %d more (📄 Full)</b>\n", len(warnings)-i)
			cut = true
			break
		}
		h.WriteString("⚠️ <b>" + one(w, lineCap) + "</b>\n")
	}
	for _, f := range c.Fields {
		h.WriteString(esc(f.Name) + ": <code>" + one(f.Value, lineCap) + "</code>\n")
	}
	var t strings.Builder
	if len(c.Always) > 0 {
		t.WriteString("\nAlways would save: ")
		used := 0
		for i, p := range c.Always {
			if i > 0 && used >= 2*lineCap {
				fmt.Fprintf(&t, " … and %d more", len(c.Always)-i)
				cut = true
				break
			}
			if i > 0 {
				t.WriteString(", ")
			}
			e := one(p, lineCap)
			used += textLen(e)
			t.WriteString("<code>" + e + "</code>")
		}
	}
	return h.String(), t.String(), cut
}

// renderPrompt lays out c as an HTML message of at most limit units.
// status, if not empty, is a line of our own (already escaped HTML) shown
// at the top: an outcome, or "still waiting". Lines other than the body
// are cut first to a cap (see lineCaps), then the body takes what is left
// and is cut with a marker that points at the Full button.
func renderPrompt(c prompt.Content, status string, limit int) rendered {
	var head, tail string
	var lineCut bool
	for _, lc := range lineCaps {
		head, tail, lineCut = promptLines(c, status, lc)
		if textLen(head)+textLen(tail)+minBodyRoom <= limit {
			break
		}
	}
	if c.Body == "" {
		return rendered{HTML: strings.TrimSuffix(head+tail, "\n"), Cut: lineCut}
	}
	label := "\n<b>" + esc(c.BodyKind.Label()) + "</b>\n<pre>"
	fixed := textLen(head) + textLen(label) + textLen("</pre>") + textLen(tail)
	body, missing := fitEscaped(c.Body, limit-fixed)
	if missing == 0 {
		return rendered{HTML: head + label + body + "</pre>" + tail, Cut: lineCut}
	}
	marker := esc(prompt.CutMarker(missing)) + " — press 📄 Full for the whole content"
	body, missing = fitEscaped(c.Body, limit-fixed-textLen(marker)-10)
	marker = esc(prompt.CutMarker(missing)) + " — press 📄 Full for the whole content"
	return rendered{HTML: head + label + body + "</pre>" + marker + tail, Cut: true}
}

// plainText is html (our own markup around escaped text) as plain text:
// the same lines without the tags, for when Telegram refuses the HTML.
// Agent text is always escaped, so every '<' in html starts one of our
// tags.
func plainText(html string) string {
	return htmlpkg.UnescapeString(tagRE.ReplaceAllString(html, ""))
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// statusLine is the line above a prompt: its outcome once final, the
// restart note while it waits through one.
func statusLine(c prompt.Content) string {
	switch {
	case c.Outcome != "":
		// The outcome carries a deny reason of up to 1,000 characters.
		outcome, _ := capped(c.Outcome, 2*lineCaps[0])
		return prompt.Icon(c.Status) + " <b>" + outcome + "</b>"
	case c.Note != "":
		return "⏳ <b>" + esc(c.Note) + "</b>"
	}
	return ""
}

// Callback operations. Data is "op:approvalID:digestPrefix", or "op:ruleID"
// for revoke.
const (
	opApprove       = "y"
	opAlways        = "a"  // show the scope choice
	opAlwaysSession = "as" // approve always, this session
	opAlwaysAgent   = "ag" // approve always, this agent, no expiry
	opAlwaysHour    = "ah" // approve always, this agent, for an hour
	opAlwaysToday   = "at" // approve always, this agent, until the day ends
	opBack          = "b"  // back from the scope choice
	opDeny          = "n"
	opReason        = "r" // deny with reason: ask for it
	opStop          = "s"
	opFull          = "f" // send the whole content as a document
	opRevoke        = "v"
)

// callbackData is a button's data, or "" if it would not fit.
func callbackData(op string, a *gate.Approval) string {
	d := op + ":" + a.ID + ":" + prompt.DigestPrefix(a)
	if len(d) > maxCallbackData {
		return ""
	}
	return d
}

type callback struct {
	op, id, digest string
}

// parseCallback splits a button's data; ok is false for data we never made.
func parseCallback(data string) (callback, bool) {
	parts := strings.Split(data, ":")
	switch {
	case len(parts) == 2 && parts[0] == opRevoke && parts[1] != "":
		return callback{op: opRevoke, id: parts[1]}, true
	case len(parts) == 3 && parts[1] != "":
		switch parts[0] {
		case opApproveAll, opDenyAll:
			return callback{op: parts[0], id: parts[1], digest: parts[2]}, true
		case opApprove, opAlways, opAlwaysSession, opAlwaysAgent, opAlwaysHour, opAlwaysToday, opBack, opDeny, opReason, opStop, opFull:
			return callback{op: parts[0], id: parts[1], digest: parts[2]}, true
		}
	}
	return callback{}, false
}

func button(label, data string) tgbotapi.InlineKeyboardButton {
	return tgbotapi.NewInlineKeyboardButtonData(label, data)
}

// label cuts a button label to a readable length.
func label(s string) string {
	s, _ = prompt.Truncate(s, maxButtonLabel)
	return strings.ReplaceAll(s, "\n", " ")
}

// choiceOps are the callback operations of prompt's choices.
var choiceOps = map[prompt.ChoiceKind]string{
	prompt.ChoiceApprove: opApprove, prompt.ChoiceAlways: opAlways, prompt.ChoiceDeny: opDeny,
	prompt.ChoiceDenyReason: opReason, prompt.ChoiceStop: opStop,
}

// choiceIcons put Telegram's emoji before prompt's labels.
var choiceIcons = map[prompt.ChoiceKind]string{
	prompt.ChoiceApprove: "✅ ", prompt.ChoiceAlways: "♾ ", prompt.ChoiceDeny: "❌ ",
	prompt.ChoiceDenyReason: "💬 ", prompt.ChoiceStop: "🛑 ",
}

// scopeOps are the callback operations of the Always choices, by key.
var scopeOps = map[string]string{prompt.ScopeKeySession: opAlwaysSession, prompt.ScopeKeyAgent: opAlwaysAgent,
	prompt.ScopeKeyHour: opAlwaysHour, prompt.ScopeKeyToday: opAlwaysToday}

// promptKeyboard is the keyboard of a pending approval, from prompt's
// choices, two to a row (Always on its own); nil when
// the id is too long for callback data (the prompt then says to use the CLI).
func promptKeyboard(a *gate.Approval, c prompt.Content, cut bool) *tgbotapi.InlineKeyboardMarkup {
	if callbackData(opAlwaysSession, a) == "" {
		return nil
	}
	var rows, always [][]tgbotapi.InlineKeyboardButton
	var row []tgbotapi.InlineKeyboardButton
	for _, ch := range prompt.Choices(a, c) {
		btn := button(label(choiceIcons[ch.Kind]+ch.Label), callbackData(choiceOps[ch.Kind], a))
		if ch.Kind == prompt.ChoiceAlways {
			always = append(always, []tgbotapi.InlineKeyboardButton{btn})
			continue
		}
		if row = append(row, btn); len(row) == 2 {
			rows, row = append(rows, row), nil
		}
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	// Always goes under the first row (Approve, Deny): its label is long.
	rows = append(rows[:1], append(always, rows[1:]...)...)
	if cut {
		rows = append(rows, []tgbotapi.InlineKeyboardButton{button("📄 Full", callbackData(opFull, a))})
	}
	m := tgbotapi.NewInlineKeyboardMarkup(rows...)
	return &m
}

// scopeKeyboard is the confirmation step of Always: prompt's scopes.
func scopeKeyboard(a *gate.Approval) *tgbotapi.InlineKeyboardMarkup {
	var rows [][]tgbotapi.InlineKeyboardButton
	var row []tgbotapi.InlineKeyboardButton
	for _, s := range prompt.AlwaysChoices {
		if row = append(row, button("♾ "+s.Label, callbackData(scopeOps[s.Key], a))); len(row) == 2 {
			rows, row = append(rows, row), nil
		}
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	rows = append(rows, []tgbotapi.InlineKeyboardButton{button("« Back", callbackData(opBack, a))})
	m := tgbotapi.NewInlineKeyboardMarkup(rows...)
	return &m
}

// noKeyboard removes a message's buttons on edit.
func noKeyboard() *tgbotapi.InlineKeyboardMarkup {
	return &tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{}}
}

// render lays out v: a pending prompt with its keyboard (and the restart
// note after a restart), or a final one with its outcome on top and the
// decision buttons gone (only Full stays, for a cut body).
func (b *Bot) render(v gate.View) (string, *tgbotapi.InlineKeyboardMarkup) {
	if len(v.Items) > 0 {
		return b.renderGroup(v)
	}
	a := v.Approval
	c := prompt.BuildView(v, b.now())
	status := statusLine(c)
	if a.Status.Final() {
		r := renderPrompt(c, status, maxMessageLen)
		if r.Cut && callbackData(opFull, a) != "" {
			m := tgbotapi.NewInlineKeyboardMarkup([]tgbotapi.InlineKeyboardButton{button("📄 Full", callbackData(opFull, a))})
			return r.HTML, &m
		}
		return r.HTML, noKeyboard()
	}
	if promptKeyboard(a, c, false) == nil {
		status = strings.TrimSpace(status + "\n" + fmt.Sprintf("Decide with <code>approvalbot approve %s</code>", esc(a.ID)))
	}
	r := renderPrompt(c, status, maxMessageLen)
	if kb := promptKeyboard(a, c, r.Cut); kb != nil {
		return r.HTML, kb
	}
	return r.HTML, noKeyboard()
}

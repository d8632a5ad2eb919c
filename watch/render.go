package watch

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// Box width limits, in columns. The box takes about 90% of the terminal,
// never less than minBox (unless the terminal itself is narrower) and never
// more than maxBox, where lines get too long to read.
const (
	minBox     = 44
	maxBox     = 120
	boxPercent = 90
	// minBodyRows is the least a tall body is given when the screen is short.
	minBodyRows = 3
)

// SGR codes. Style.paint drops them without colour.
const (
	sgrBorder  = "36"      // cyan
	sgrDanger  = "1;31"    // bold red
	sgrBanner  = "1;97;41" // bold white on red
	sgrSelect  = "7"       // reverse video
	sgrDim     = "2"
	sgrWarn    = "33"
	sgrGood    = "32"
	sgrBad     = "31"
	sgrAdded   = "32"
	sgrRemoved = "31"
)

// Style says how the screen is drawn.
type Style struct {
	// Color enables ANSI colours; off when stdout is not a terminal or
	// NO_COLOR is set. Without it the screen is plain text and the
	// selection is still marked with ›.
	Color bool
}

func (s Style) paint(code, text string) string {
	if !s.Color || code == "" || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// BoxWidth is the width of the box on a terminal width columns wide.
func BoxWidth(width int) int {
	w := width * boxPercent / 100
	w = max(min(w, maxBox), minBox)
	return max(min(w, width), 8)
}

// styled is one line inside the box: plain text (its width is measured on
// it) and the SGR code it is drawn with.
type styled struct {
	text string
	code string
}

// Render draws the screen for m on a terminal width x height at now. It is
// a pure function: the same arguments give the same text. Lines are
// separated by "\n". Every piece of agent text in it went through
// prompt.Visible, so no escape sequence or invisible character of the
// agent's reaches the terminal.
func Render(m Model, width, height int, now time.Time, st Style) string {
	var logs []string
	if len(m.log) > 0 {
		logs = append(logs, "", st.paint(sgrDim, "Recent:"))
		for _, l := range m.log {
			mark, code := "✗", sgrBad
			if l.Good {
				mark, code = "✓", sgrGood
			}
			// Wrapped, not cut: the line says who decided and why.
			stamp := l.At.Format("15:04:05") + " " + mark + " "
			indent := strings.Repeat(" ", textWidth(stamp))
			for i, piece := range wrap(l.Text, max(width-len(indent), 1)) {
				if i == 0 {
					logs = append(logs, st.paint(code, stamp+piece))
				} else {
					logs = append(logs, st.paint(code, indent+piece))
				}
			}
		}
	}
	out := header(m, width, now, st)
	if a := m.current(); a != nil {
		out = append(out, "")
		// The box gets what the header and the log leave of the screen.
		out = append(out, box(m, a, BoxWidth(width), height-len(out)-len(logs), now, st)...)
	} else {
		out = append(out, "")
		for _, l := range wrap("No pending approvals. Waiting for the next one…", width) {
			out = append(out, st.paint(sgrDim, l))
		}
	}
	out = append(out, logs...)
	return strings.Join(out, "\n")
}

func header(m Model, width int, now time.Time, st Style) []string {
	var s, code string
	switch {
	case !m.connected && m.connErr == "":
		s, code = "approvalbot watch · connecting to the daemon…", sgrWarn
	case !m.connected:
		retry := ""
		if d := m.retryAt.Sub(now); d > 0 {
			retry = fmt.Sprintf(", retrying in %s", d.Round(time.Second))
		}
		s, code = fmt.Sprintf("approvalbot watch · DISCONNECTED: %s%s · nothing can be decided", prompt.VisibleLine(m.connErr), retry), sgrDanger
	default:
		s = fmt.Sprintf("approvalbot watch · connected · %d pending", len(m.pending))
	}
	lines := wrap(s, width)
	for i := range lines {
		lines[i] = st.paint(code, lines[i])
	}
	return lines
}

// box draws the selector box for the view (a, and in a grouped view the
// other pending calls of its session), at most rows lines tall when its
// body can be scrolled to fit (the rest of the box is always drawn whole).
func box(m Model, a *gate.Approval, bw, rows int, now time.Time, st Style) []string {
	inner := bw - 4
	v := m.view()
	var top, body []styled
	var title string
	var risky bool
	keep, focusAt := 0, 0 // body lines always shown; where the call in focus starts
	focus := prompt.Build(m.focused(), now)
	var g prompt.Group
	if len(v) > 1 {
		g = prompt.BuildGroup(groupView(v), now)
		title = " " + g.Title + " "
		top = fieldLines(g.Fields, inner, nil)
		for i, it := range g.Items {
			if i > 0 {
				body = append(body, styled{})
			}
			head, code := "  "+it.Heading(), ""
			if it.Approval.ID == m.focus {
				focusAt = len(body)
				head, code = "▶ "+it.Heading()+"  (in focus)", sgrSelect
			}
			for _, l := range wrap(head, inner) {
				body = append(body, styled{pad(l, inner), code})
			}
			body = append(body, callLines(it.Content, it.ItemFields(), it.Approval, inner, now)...)
			risky = risky || len(it.Content.Risks) > 0
		}
	} else {
		title = fmt.Sprintf(" Approval 1 of %d ", len(m.pending))
		body = bodyLines(focus, inner)
		keep = min(len(body), 1) // the "Command:" label
		top = callLines(focus, focus.Fields, a, inner, now)
		top = top[:len(top)-len(body)]
		risky = len(focus.Risks) > 0
	}
	if note := m.stillNote(); note != "" {
		var lines []styled
		for _, l := range wrap(note, inner) {
			lines = append(lines, styled{l, sgrWarn})
		}
		top = append(lines, top...)
	}
	border := sgrBorder
	if risky {
		border = sgrDanger
	}

	// The Always pattern(s) are shown on the Always choice itself.
	bottom := choices(m, focus, g, inner)
	bottom = append(bottom, styled{})
	for _, l := range wrap(hint(m, now), inner) {
		bottom = append(bottom, styled{l, sgrDim})
	}
	if m.status != "" {
		for _, l := range wrap(prompt.VisibleLine(m.status), inner) {
			bottom = append(bottom, styled{l, sgrWarn})
		}
	}

	// Fit a long body into the rows left, scrolled with PgUp/PgDn from
	// the call in focus; a body that fits (or a screen too short for
	// anything) is drawn whole.
	fixed := len(top) + len(bottom) + 4 // top border, blank, separator, bottom border
	if avail := rows - fixed - 3 + keep; len(body) > keep && len(body)-keep > avail {
		avail = max(avail, minBodyRows)
		lines := body[keep:]
		first := min(max(focusAt+m.scroll, 0), max(len(lines)-avail, 0))
		last := min(first+avail, len(lines))
		win := slices.Clone(body[:keep])
		win = append(win, styled{truncate(fmt.Sprintf("  ↑ %d more line(s) above (PgUp)", first), inner), sgrDim})
		win = append(win, lines[first:last]...)
		win = append(win, styled{truncate(fmt.Sprintf("  ↓ %d more line(s) below (PgDn)", len(lines)-last), inner), sgrDim})
		body = win
	}

	if n := len(m.pending) - len(v); n > 0 {
		title += fmt.Sprintf("· %d more waiting ", n)
	}
	title = truncate(title, bw-4)
	out := []string{st.paint(border, "╭─"+title+strings.Repeat("─", bw-3-textWidth(title))+"╮")}
	row := func(l styled) {
		out = append(out, st.paint(border, "│ ")+st.paint(l.code, pad(l.text, inner))+st.paint(border, " │"))
	}
	for _, l := range top {
		row(l)
	}
	if len(body) > 0 {
		row(styled{})
		for _, l := range body {
			row(l)
		}
	}
	out = append(out, st.paint(border, "├"+strings.Repeat("─", bw-2)+"┤"))
	for _, l := range bottom {
		row(l)
	}
	out = append(out, st.paint(border, "╰"+strings.Repeat("─", bw-2)+"╯"))
	return out
}

// stillNote is the line a view carries once the daemon, reached again after
// the connection was lost, said its calls are still pending: the terminal
// cannot tell a restart of the daemon from a break in the network, so it
// says what it knows. "" when the connection never broke under the view.
func (m Model) stillNote() string {
	var at time.Time
	for _, a := range m.view() {
		if i := m.index(a.ID); i >= 0 && m.pending[i].stillAt.After(at) {
			at = m.pending[i].stillAt
		}
	}
	if at.IsZero() {
		return ""
	}
	return "Still waiting (the connection to approvalbot was lost; back at " + at.UTC().Format(prompt.TimeFormat) + ")"
}

// groupView is the gate.View of a grouped view listing v, with the batch
// its batch choices decide: exactly v, each call with its digest.
func groupView(v []*gate.Approval) gate.View {
	b := &gate.Batch{Agent: v[0].Agent, SessionID: v[0].SessionID}
	for _, a := range v {
		b.Members = append(b.Members, gate.BatchMember{ID: a.ID, Digest: a.Digest})
	}
	return gate.View{Approval: v[0], Items: v, Batch: b}
}

// callLines are the lines of one call: its risk labels as a banner (the
// same labels every frontend shows), its warnings, fields and body.
func callLines(c prompt.Content, fields []prompt.Field, a *gate.Approval, inner int, now time.Time) []styled {
	var out []styled
	for _, r := range c.Risks {
		for _, l := range wrap(" ⚠ "+r+" ", inner) {
			out = append(out, styled{pad(l, inner), sgrBanner})
		}
	}
	for _, w := range c.Warnings {
		for _, l := range wrap("⚠ "+w, inner) {
			out = append(out, styled{l, sgrDanger})
		}
	}
	out = append(out, fieldLines(fields, inner, func(f prompt.Field) string {
		if f.Name == "Deadline" {
			return countdown(a.Deadline, now)
		}
		return f.Value
	})...)
	return append(out, bodyLines(c, inner)...)
}

// fieldLines are "Label   value" lines, the labels aligned; value, if
// set, gives the value shown for a field.
func fieldLines(fields []prompt.Field, inner int, value func(prompt.Field) string) []styled {
	labelW := 0
	for _, f := range fields {
		labelW = max(labelW, textWidth(f.Name))
	}
	var out []styled
	for _, f := range fields {
		v := f.Value
		if value != nil {
			v = value(f)
		}
		out = append(out, labelled(f.Name, v, labelW, inner, "")...)
	}
	return out
}

// bodyLines are the command or diff of c under its label, wrapped, a
// diff's added and removed lines coloured.
func bodyLines(c prompt.Content, inner int) []styled {
	if c.Body == "" {
		return nil
	}
	body := []styled{{c.BodyKind.Label() + ":", sgrDim}}
	for _, src := range strings.Split(c.Body, "\n") {
		code := ""
		if c.BodyKind == prompt.BodyDiff {
			switch {
			case strings.HasPrefix(src, "+") && !strings.HasPrefix(src, "+++"):
				code = sgrAdded
			case strings.HasPrefix(src, "-") && !strings.HasPrefix(src, "---"):
				code = sgrRemoved
			}
		}
		for _, l := range wrap(src, inner-2) {
			body = append(body, styled{"  " + l, code})
		}
	}
	return body
}

// labelled is a "Label   value" field, the value wrapped under itself.
func labelled(name, value string, labelW, inner int, code string) []styled {
	var out []styled
	indent := strings.Repeat(" ", labelW+2)
	for i, l := range wrap(value, max(inner-labelW-2, 1)) {
		if i == 0 {
			out = append(out, styled{pad(name, labelW+2) + l, code})
		} else {
			out = append(out, styled{indent + l, code})
		}
	}
	return out
}

func choices(m Model, c prompt.Content, g prompt.Group, inner int) []styled {
	var out []styled
	line := func(ch Choice, text string) {
		code, mark := "", "  "
		if m.sel == ch {
			code, mark = sgrSelect, "› "
		}
		for i, l := range wrap(text, max(inner-4, 1)) {
			if i == 0 {
				out = append(out, styled{pad(mark+l, inner), code})
			} else {
				out = append(out, styled{pad("    "+l, inner), code})
			}
		}
	}
	if m.grouped() {
		n := slices.Index(m.shown, m.focus) + 1
		for _, l := range wrap(fmt.Sprintf("Call %d of %d (←/→ another call):", n, len(m.shown)), inner) {
			out = append(out, styled{l, sgrDim})
		}
	}
	line(ChoiceApprove, "1 Approve once")
	always := "2 Always: " + strings.Join(c.Always, ", ")
	if len(c.Always) == 0 {
		always = "2 Always (no pattern for this call)"
	}
	if m.sel == ChoiceAlways {
		always += "\nfor how long (←/→ to change):"
		for i, sc := range prompt.AlwaysChoices {
			mark := "( ) "
			if m.scope == i {
				mark = "(•) "
			}
			always += "\n" + mark + strings.ToLower(sc.Label)
		}
	}
	line(ChoiceAlways, always)
	reason := " · reason: " + prompt.VisibleLine(m.reason) + "▏"
	deny := "3 Deny"
	if m.sel == ChoiceDeny || (m.reason != "" && m.sel != ChoiceDenyAll) {
		deny += reason
	}
	line(ChoiceDeny, deny)
	line(-1, "s Stop: deny and stop the agent's turn")
	for _, ch := range g.BatchChoices() {
		switch ch.Kind {
		case prompt.ChoiceApproveAll:
			line(ChoiceApproveAll, "4 "+ch.Label)
		case prompt.ChoiceDenyAll:
			text := "5 " + ch.Label
			if m.sel == ChoiceDenyAll {
				text += reason
			}
			line(ChoiceDenyAll, text)
		}
	}
	return out
}

// hint is the line under the choices: which keys work now.
func hint(m Model, now time.Time) string {
	switch {
	case !m.connected:
		return "disconnected: nothing can be decided until the connection is back · Ctrl+C quit"
	case m.sending != "":
		return "sending the decision…"
	case now.Before(m.GuardUntil()):
		return "new approval: keys enabled in a moment…"
	case m.sel == ChoiceDenyAll:
		return "type a reason for all · Enter deny all · Backspace/Esc edit · ↑/↓ move · Ctrl+C quit"
	case m.sel == ChoiceDeny || m.reason != "":
		return "type the reason · Enter deny · Backspace/Esc edit · ↑/↓ move · Ctrl+C quit"
	case m.grouped():
		return "↑/↓ Enter · 1 2 3 s: the call in focus · ←/→ another call · 4 approve all · 5 deny all · a letter starts a deny reason · Ctrl+C quit"
	}
	return "↑/↓ Enter · 1 2 3 · a letter starts a deny reason · s Stop · Ctrl+C quit"
}

// countdown phrases the time left before deadline.
func countdown(deadline, now time.Time) string {
	at := deadline.UTC().Format("15:04:05 UTC")
	left := deadline.Sub(now)
	if left <= 0 {
		return "passed at " + at + " (expiring)"
	}
	left = left.Truncate(time.Second)
	var d string
	if left >= time.Hour {
		d = fmt.Sprintf("%dh%02dm%02ds", int(left.Hours()), int(left.Minutes())%60, int(left.Seconds())%60)
	} else {
		d = fmt.Sprintf("%dm%02ds", int(left.Minutes()), int(left.Seconds())%60)
	}
	return d + " left (until " + at + ")"
}

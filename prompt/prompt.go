// Package prompt builds the platform-neutral content of an approval prompt
// (what a person is asked to approve) and the text of its outcome, so every
// frontend (Telegram, Slack, the terminal) shows the same facts the same
// way. Platform packages only lay the content out and escape it for their
// markup. Every string in a Content is already passed through Visible (or
// VisibleLine), so invisible and bidi characters can never hide in a prompt.
package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"approvalbot/gate"
)

// BodyKind says what a prompt's body holds, so a frontend can label it.
type BodyKind string

// Body kinds.
const (
	BodyCommand BodyKind = "command" // a shell command line
	BodyDiff    BodyKind = "diff"    // a unified diff of an edit
	BodyContent BodyKind = "content" // the whole new content of a file write
	BodyJSON    BodyKind = "json"    // any other tool's input, pretty-printed
)

// Label is the heading frontends show above a body of kind k.
func (k BodyKind) Label() string {
	switch k {
	case BodyCommand:
		return "Command"
	case BodyDiff:
		return "Diff"
	case BodyContent:
		return "New content"
	}
	return "Input"
}

// Field is one labelled fact of a prompt.
type Field struct {
	Name  string
	Value string
}

// Content is what a frontend shows for a pending approval.
type Content struct {
	// Title is one line naming the agent and the tool.
	Title string
	// Fields are agent, session, cwd, tool, path, rule and deadline, in
	// display order; empty ones are left out.
	Fields []Field
	// Body is the full command, diff, content or JSON; BodyKind says which.
	Body     string
	BodyKind BodyKind
	// Warnings are things the person must not miss ("outside project: ...",
	// "invisible characters").
	Warnings []string
	// Always are the patterns the Always button would save, as "Tool: pattern"
	// when the tool differs from the call's, else the pattern alone.
	Always []string
	// Deadline is when the approval expires.
	Deadline time.Time
	// Risks are the call's risk labels (Risks), most serious first.
	Risks []string
	// AskedBy names what made the gate ask, briefly (AskedBy); it is also
	// the "Asked by" field.
	AskedBy string
	// Status is the approval's status; Outcome says how it ended ("" while
	// pending), Note is the restart note of a prompt shown again.
	Status  gate.Status
	Outcome string
	Note    string
}

// BuildView is Build for what the gate asked a frontend to show: the
// approval, and the restart note if the daemon restarted while it waited.
func BuildView(v gate.View, now time.Time) Content {
	c := Build(v.Approval, now)
	if !v.Restarted.IsZero() && !v.Approval.Status.Final() {
		c.Note = RestartNote(v.Restarted)
	}
	return c
}

// Build returns the content of a's prompt at now (now only phrases the
// deadline as a duration).
func Build(a *gate.Approval, now time.Time) Content {
	c := Content{
		Title:    VisibleLine(fmt.Sprintf("%s wants to run %s", nonEmpty(a.Agent, "an agent"), nonEmpty(a.Tool, "a tool"))),
		Deadline: a.Deadline,
		Risks:    Risks(a),
		AskedBy:  AskedBy(a.Evaluation, a.Tool),
		Status:   a.Status,
	}
	if a.Status.Final() {
		c.Outcome = Outcome(a)
	}
	add := func(name, value string) {
		if value != "" {
			c.Fields = append(c.Fields, Field{Name: name, Value: VisibleLine(value)})
		}
	}
	add("Agent", a.Agent)
	add("Session", a.SessionID)
	add("Cwd", a.Cwd)
	add("Tool", a.Tool)

	// Everything about the input comes from what the gate judged, never
	// from a reading of the raw input here.
	j := a.Judged
	c.Body, c.BodyKind = body(a)
	if j != nil {
		add("Workdir", j.Workdir)
		add("Path", strings.Join(j.Paths, ", "))
	}
	add("Asked by", c.AskedBy)
	if !a.Deadline.IsZero() {
		add("Deadline", DeadlineText(a.Deadline, now))
	}
	add("ID", a.ID)
	add("Resume", ResumeCommand(a))

	// The outside-project risk is a label; the paths are said once, here.
	if paths := a.Evaluation.OutsidePaths; a.Evaluation.OutsideProject && len(paths) > 0 {
		add("Outside", strings.Join(paths, ", "))
	}
	if HasInvisible(rawBody(a)) {
		c.Warnings = append(c.Warnings, "invisible or control characters in the input (shown as ⟨U+…⟩)")
	}
	if len(a.Evaluation.AlwaysRules) > 0 {
		for _, r := range a.Evaluation.AlwaysRules {
			s := r.Pattern
			if r.Tool != "" && r.Tool != a.Tool {
				s = r.Tool + ": " + r.Pattern
			}
			c.Always = append(c.Always, VisibleLine(s))
		}
	} else {
		for _, p := range a.Evaluation.Always {
			c.Always = append(c.Always, VisibleLine(p))
		}
	}
	return c
}

// Text renders c as plain text, whole (for a file, a terminal, a log).
func (c Content) Text() string {
	var b strings.Builder
	if c.Outcome != "" {
		b.WriteString(c.Outcome + "\n")
	}
	if c.Note != "" {
		b.WriteString(c.Note + "\n")
	}
	b.WriteString(c.Title)
	b.WriteString("\n\n")
	if len(c.Risks) > 0 {
		fmt.Fprintf(&b, "Risks: %s\n", strings.Join(c.Risks, " · "))
	}
	for _, f := range c.Fields {
		fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Value)
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "WARNING: %s\n", w)
	}
	if c.Body != "" {
		fmt.Fprintf(&b, "\n%s:\n%s\n", c.BodyKind, c.Body)
	}
	if len(c.Always) > 0 {
		fmt.Fprintf(&b, "\nAlways would save: %s\n", strings.Join(c.Always, ", "))
	}
	return b.String()
}

// DeadlineText phrases a deadline as a UTC clock time and the time left.
func DeadlineText(deadline, now time.Time) string {
	s := deadline.UTC().Format(TimeFormat)
	if left := deadline.Sub(now); left > 0 {
		s += " (in " + left.Round(time.Second).String() + ")"
	} else {
		s += " (passed)"
	}
	return s
}

// Outcome is one line saying how a final approval ended: "Approved by @ana
// via Slack at 12:03:04 UTC", "Denied by bob via Telegram at ...: reason",
// "Expired at ...". A pending approval gives "Pending".
func Outcome(a *gate.Approval) string {
	if !a.Status.Final() {
		return "Pending"
	}
	what := Headline(a.Status)
	var b strings.Builder
	b.WriteString(what)
	if a.DecidedBy != "" && a.Status != gate.StatusExpired {
		b.WriteString(" by " + a.DecidedBy)
	}
	if a.Via != "" && a.Via != "timeout" && a.Via != "agent" {
		b.WriteString(" via " + viaName(a.Via))
	}
	if a.DecidedAt != nil {
		b.WriteString(" at " + a.DecidedAt.UTC().Format(TimeFormat))
	}
	if a.Reason != "" {
		b.WriteString(": " + a.Reason)
	}
	return VisibleLine(b.String())
}

func viaName(v string) string {
	switch v {
	case "telegram":
		return "Telegram"
	case "slack":
		return "Slack"
	case "cli":
		return "CLI"
	case "api":
		return "API"
	}
	return v
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// rawBody is the body before Visible, to detect hidden characters.
func rawBody(a *gate.Approval) string {
	if j := a.Judged; j != nil && j.Kind == gate.KindShell && j.Command != "" {
		return j.Command
	}
	return string(a.Input)
}

// body returns the prompt body: from a.Judged, the input as the gate
// decoded and judged it (the command line the shell analysis read, the
// edit it judged the path of), else the raw input, whole.
func body(a *gate.Approval) (string, BodyKind) {
	if j := a.Judged; j != nil {
		path := ""
		if len(j.Paths) > 0 {
			path = j.Paths[0]
		}
		switch {
		case j.Kind == gate.KindShell && j.Command != "":
			return Visible(j.Command), BodyCommand
		case len(j.Edits) > 0 && len(j.Paths) == 1:
			var b strings.Builder
			for i, e := range j.Edits {
				if i > 0 {
					b.WriteString("\n")
				}
				b.WriteString(Diff(path, e.Old, e.New))
			}
			return Visible(b.String()), BodyDiff
		case j.Content != nil && len(j.Paths) == 1:
			return Visible(*j.Content), BodyContent
		case j.Patch != "":
			return Visible(j.Patch), BodyDiff
		}
	}
	if len(bytes.TrimSpace(a.Input)) == 0 {
		return "", BodyJSON
	}
	return Visible(prettyJSON(a.Input)), BodyJSON
}

// prettyJSON indents raw, or returns it as it is if it is not JSON.
func prettyJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// ResumeCommand is the command that resumes a deferred call's `claude -p`
// session after the decision, or "" for a call that was not deferred. It is
// built here from the session id and cwd, never taken from the agent, so a
// prompt cannot be made to suggest another command; a session id that is
// not a plain token gives "" too.
func ResumeCommand(a *gate.Approval) string {
	if !a.Deferred || !plainToken(a.SessionID) {
		return ""
	}
	cmd := "claude -p --resume " + a.SessionID
	if a.Cwd != "" {
		cmd = "cd " + gate.ShellQuote(a.Cwd) + " && " + cmd
	}
	return cmd
}

// plainToken reports whether s is 1 to 128 letters, digits, '-' or '_'
// (Claude Code's session ids are UUIDs).
func plainToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

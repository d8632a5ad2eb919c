package prompt

import (
	"fmt"
	"strings"
	"time"

	"approvalbot/gate"
)

// Group is the platform-neutral content of a grouped view (gate.View with
// Items): one agent session's calls, pending ones in full, decided ones
// with their outcome, and the batch choices.
type Group struct {
	// Title is one line: the agent, how many calls wait, the session.
	Title string
	// Fields are what the calls share: agent, session, cwd.
	Fields []Field
	// Items are the calls, in order, numbered from 1.
	Items []GroupItem
	// Pending is how many items are pending.
	Pending int
	// Batch is what the batch choices decide (nil: fewer than two pending).
	Batch *gate.Batch
	// Note is the restart note of a view shown again.
	Note string
}

// GroupItem is one call of a grouped view.
type GroupItem struct {
	N        int
	Approval *gate.Approval
	Content  Content
}

// ItemFields are the fields of an item the group does not already say
// (path, workdir, outside, asked by, deadline, id).
func (it GroupItem) ItemFields() []Field {
	var out []Field
	for _, f := range it.Content.Fields {
		switch f.Name {
		case "Agent", "Session", "Cwd", "Tool":
			continue
		}
		out = append(out, f)
	}
	return out
}

// Heading is the item's first line: its number and tool, or once
// decided its outcome.
func (it GroupItem) Heading() string {
	h := fmt.Sprintf("%d. %s", it.N, VisibleLine(it.Approval.Tool))
	if it.Approval.Status.Final() {
		h += ": " + Outcome(it.Approval)
	}
	return h
}

// BuildGroup returns the content of v's grouped view at now.
func BuildGroup(v gate.View, now time.Time) Group {
	g := Group{Batch: v.Batch}
	if !v.Restarted.IsZero() {
		g.Note = RestartNote(v.Restarted)
	}
	for i, a := range v.Items {
		c := Build(a, now)
		g.Items = append(g.Items, GroupItem{N: i + 1, Approval: a, Content: c})
		if !a.Status.Final() {
			g.Pending++
		}
	}
	a := v.Approval
	switch g.Pending {
	case 0:
		g.Title = fmt.Sprintf("%s: %d calls decided", nonEmpty(a.Agent, "an agent"), len(v.Items))
	case 1:
		g.Title = fmt.Sprintf("%s: 1 call waiting", nonEmpty(a.Agent, "an agent"))
	default:
		g.Title = fmt.Sprintf("%s: %d calls waiting", nonEmpty(a.Agent, "an agent"), g.Pending)
	}
	g.Title = VisibleLine(g.Title)
	add := func(name, value string) {
		if value != "" {
			g.Fields = append(g.Fields, Field{Name: name, Value: VisibleLine(value)})
		}
	}
	add("Agent", a.Agent)
	add("Session", a.SessionID)
	cwd := a.Cwd
	for _, it := range v.Items {
		if it.Cwd != cwd {
			cwd = "" // not shared: each item says its own
		}
	}
	add("Cwd", cwd)
	if cwd == "" {
		for i := range g.Items {
			if d := g.Items[i].Approval.Cwd; d != "" {
				g.Items[i].Content.Fields = append([]Field{{Name: "Cwd", Value: VisibleLine(d)}}, g.Items[i].Content.Fields...)
			}
		}
	}
	return g
}

// Text renders g as plain text, whole.
func (g Group) Text() string {
	var b strings.Builder
	if g.Note != "" {
		b.WriteString(g.Note + "\n")
	}
	b.WriteString(g.Title + "\n")
	for _, f := range g.Fields {
		fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Value)
	}
	for _, it := range g.Items {
		b.WriteString("\n" + it.Heading() + "\n")
		if it.Approval.Status.Final() {
			continue
		}
		c := it.Content
		if len(c.Risks) > 0 {
			fmt.Fprintf(&b, "Risks: %s\n", strings.Join(c.Risks, " · "))
		}
		for _, w := range c.Warnings {
			fmt.Fprintf(&b, "WARNING: %s\n", w)
		}
		for _, f := range it.ItemFields() {
			fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Value)
		}
		if c.Body != "" {
			fmt.Fprintf(&b, "%s:\n%s\n", c.BodyKind, c.Body)
		}
	}
	return b.String()
}

// Batch choices of a grouped view with two or more pending calls.
const (
	ChoiceApproveAll ChoiceKind = "approve_all"
	ChoiceDenyAll    ChoiceKind = "deny_all"
)

// BatchChoices are the grouped view's batch choices, in display order;
// none when fewer than two calls are pending.
func (g Group) BatchChoices() []Choice {
	if g.Batch == nil || len(g.Batch.Members) < 2 {
		return nil
	}
	return []Choice{
		{ChoiceApproveAll, fmt.Sprintf("Approve all %d", len(g.Batch.Members))},
		{ChoiceDenyAll, "Deny all"},
	}
}

// ItemChoices are the choices each pending call of a grouped view offers
// (Always and its scope step stay on single prompts and replies).
var ItemChoices = []ChoiceKind{ChoiceApprove, ChoiceDeny, ChoiceDenyReason}

// BatchDecision is the gate decision a batch choice makes.
func BatchDecision(k ChoiceKind) gate.Decision {
	if k == ChoiceApproveAll {
		return gate.Decision{Approve: true}
	}
	return gate.Decision{}
}

// BatchDigestLen is how many hex digits of a batch's digest a button
// carries (the gate accepts 8 or more).
const BatchDigestLen = 16

// BatchOutcome says in one line what a batch decision did: "Approved 3 of
// 3", "Denied 2 of 3; 1 already decided (approved by @bob)".
func BatchOutcome(approve bool, rs []gate.BatchResult) string {
	verb := "Denied"
	if approve {
		verb = "Approved"
	}
	n := 0
	var other []string
	for _, r := range rs {
		switch r.Result {
		case gate.BatchDecided:
			n++
		case gate.BatchAlreadyDecided:
			s := "already decided"
			if r.Approval != nil {
				s += " (" + strings.ToLower(Headline(r.Approval.Status))
				if r.Approval.DecidedBy != "" {
					s += " by " + r.Approval.DecidedBy
				}
				s += ")"
			}
			other = append(other, s)
		case gate.BatchDigestMismatch:
			other = append(other, "changed since shown, left pending")
		case gate.BatchNotFound:
			other = append(other, "unknown")
		default:
			other = append(other, "failed: "+r.Error)
		}
	}
	s := fmt.Sprintf("%s %d of %d", verb, n, len(rs))
	if len(other) > 0 {
		s += "; " + strings.Join(other, "; ")
	}
	return VisibleLine(s)
}

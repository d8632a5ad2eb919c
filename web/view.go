package web

import (
	"strings"
	"time"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// approvalView is an approval as the page shows it: the prompt content
// every frontend shows (prompt.Build, from what the gate judged), already
// passed through prompt.Visible, so the script only places text.
type approvalView struct {
	ID       string      `json:"id"`
	Status   gate.Status `json:"status"`
	Pending  bool        `json:"pending"`
	Good     bool        `json:"good"` // the call may run (approved, allowed)
	Headline string      `json:"headline"`
	Icon     string      `json:"icon"`
	Title    string      `json:"title"`
	Agent    string      `json:"agent"`
	Session  string      `json:"session,omitempty"`
	Tool     string      `json:"tool"`
	Fields   []fieldView `json:"fields"`
	Body     string      `json:"body"`
	// BodyKind is command, diff, content or json; BodyLabel its heading.
	BodyKind  prompt.BodyKind `json:"body_kind"`
	BodyLabel string          `json:"body_label"`
	Warnings  []string        `json:"warnings"`
	Risks     []string        `json:"risks"`
	AskedBy   string          `json:"asked_by,omitempty"`
	Outside   []string        `json:"outside"` // paths outside the call's cwd
	Always    []string        `json:"always"`
	Choices   []choiceView    `json:"choices"`
	Scopes    []scopeView     `json:"scopes"`
	Digest    string          `json:"digest"` // the prefix a decision carries, so it is for the call shown
	Created   time.Time       `json:"created_at"`
	Deadline  time.Time       `json:"deadline"`
	Outcome   string          `json:"outcome,omitempty"`
	Note      string          `json:"note,omitempty"`
}

type fieldView struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type choiceView struct {
	Kind  prompt.ChoiceKind `json:"kind"`
	Label string            `json:"label"`
}

type scopeView struct {
	Key   string     `json:"key"` // prompt.AlwaysChoices: the scope and the expiry
	Scope gate.Scope `json:"scope"`
	Label string     `json:"label"`
}

// fieldsShownApart are prompt fields the page lays out itself (the title
// names agent and tool, the deadline counts down, outside is a banner).
var fieldsShownApart = map[string]bool{"Deadline": true, "Outside": true}

func viewOf(a *gate.Approval, now time.Time) *approvalView {
	c := prompt.Build(a, now)
	v := &approvalView{
		ID:        a.ID,
		Status:    a.Status,
		Pending:   !a.Status.Final(),
		Good:      prompt.Good(a.Status),
		Headline:  prompt.Headline(a.Status),
		Icon:      prompt.Icon(a.Status),
		Title:     c.Title,
		Agent:     prompt.VisibleLine(a.Agent),
		Session:   prompt.VisibleLine(a.SessionID),
		Tool:      prompt.VisibleLine(a.Tool),
		Body:      c.Body,
		BodyKind:  c.BodyKind,
		BodyLabel: c.BodyKind.Label(),
		Warnings:  nonNil(c.Warnings),
		Risks:     nonNil(c.Risks),
		AskedBy:   c.AskedBy,
		Outside:   []string{},
		Always:    nonNil(c.Always),
		Choices:   []choiceView{},
		Scopes:    []scopeView{},
		Digest:    prompt.DigestPrefix(a),
		Created:   a.CreatedAt,
		Deadline:  a.Deadline,
		Outcome:   c.Outcome,
		Note:      c.Note,
	}
	for _, f := range c.Fields {
		if !fieldsShownApart[f.Name] {
			v.Fields = append(v.Fields, fieldView{f.Name, f.Value})
		}
	}
	if a.Evaluation.OutsideProject {
		for _, p := range a.Evaluation.OutsidePaths {
			v.Outside = append(v.Outside, prompt.VisibleLine(p))
		}
		if len(v.Outside) == 0 {
			v.Outside = append(v.Outside, "(a path outside the working directory)")
		}
	}
	if v.Pending {
		for _, ch := range prompt.Choices(a, c) {
			v.Choices = append(v.Choices, choiceView{ch.Kind, ch.Label})
		}
		for _, s := range prompt.AlwaysChoices {
			v.Scopes = append(v.Scopes, scopeView{s.Key, s.Scope, s.Label})
		}
	}
	return v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ruleView is an Always rule as the page lists it.
type ruleView struct {
	ID        string     `json:"id"`
	Agent     string     `json:"agent"`
	Tool      string     `json:"tool"`
	Pattern   string     `json:"pattern"`
	Scope     gate.Scope `json:"scope"`
	Session   string     `json:"session,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	CreatedBy string     `json:"created_by,omitempty"`
}

func ruleViewOf(r gate.AlwaysRule) ruleView {
	return ruleView{
		ID: r.ID, Agent: prompt.VisibleLine(r.Agent), Tool: prompt.VisibleLine(r.Tool),
		Pattern: prompt.VisibleLine(r.Pattern), Scope: r.Scope, Session: prompt.VisibleLine(r.SessionID),
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, CreatedBy: prompt.VisibleLine(r.CreatedBy),
	}
}

// auditView is an audit entry as the history lists it, with a one-line
// summary of the call it is about while that approval is still stored.
type auditView struct {
	Seq      uint64      `json:"seq"`
	Time     time.Time   `json:"time"`
	Event    string      `json:"event"`
	Approval string      `json:"approval_id,omitempty"`
	Agent    string      `json:"agent,omitempty"`
	Tool     string      `json:"tool,omitempty"`
	Status   gate.Status `json:"status,omitempty"`
	Decision gate.Action `json:"decision,omitempty"`
	By       string      `json:"by,omitempty"`
	Detail   string      `json:"detail,omitempty"`
	Summary  string      `json:"summary,omitempty"`
	Good     bool        `json:"good"`
}

// summaryRunes bounds a history line's call summary; the whole call is one
// tap away in the approval's own view.
const summaryRunes = 200

func auditViewOf(e gate.AuditEntry, a *gate.Approval, now time.Time) auditView {
	v := auditView{
		Seq: e.Seq, Time: e.Time, Event: e.Event, Approval: e.ApprovalID,
		Agent: prompt.VisibleLine(e.Agent), Tool: prompt.VisibleLine(e.Tool),
		Status: e.Status, Decision: e.Decision, By: prompt.VisibleLine(e.By),
		Detail: prompt.VisibleLine(e.Detail), Good: e.Decision == gate.Allow,
	}
	if a != nil {
		body := prompt.Build(a, now).Body
		if j := a.Judged; j != nil && j.Kind != gate.KindShell && len(j.Paths) > 0 {
			body = prompt.VisibleLine(strings.Join(j.Paths, ", ")) // a diff or a file's content says little on one line
		}
		body = strings.Join(strings.Fields(body), " ")
		if r := []rune(body); len(r) > summaryRunes {
			body = string(r[:summaryRunes]) + "…"
		}
		v.Summary = body
	}
	return v
}

package slack

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// Block Kit limits, from https://api.slack.com/reference/block-kit/blocks
// and https://api.slack.com/reference/block-kit/composition-objects.
const (
	maxSectionText   = 3000 // section text, characters
	maxFieldText     = 2000 // each section field
	maxFields        = 10   // fields per section
	maxButtonText    = 75   // button label
	maxConfirmText   = 300  // confirm dialog text
	maxContextText   = 2000 // context element text
	maxFallbackText  = 3000 // we keep the notification text short; the API allows 40000
	maxThreadChunk   = 3500 // thread follow-up messages with the full text, in runes
	sectionHeadroom  = 100  // room for the label and fences around a code block
	actionsBlockID   = "approval_actions"
	reasonCallbackID = "approvalbot_deny_reason"
	reasonBlockID    = "reason"
	reasonActionID   = "reason_input"
)

// Action ids of the prompt's buttons.
const (
	actApprove     = "approve"
	actAlways      = "always"
	actDeny        = "deny"
	actDenyReason  = "deny_reason"
	actStop        = "stop"
	actScopePrefix = "always_" // + prompt.AlwaysChoices key: the scope step's buttons
	actBack        = "always_back"
)

// slackMention matches a decider recorded by this frontend ("<@U123>").
var slackMention = regexp.MustCompile(`^<@[UW][A-Z0-9]{2,20}>$`)

// view is a rendered approval message.
type view struct {
	Fallback string        // notification text
	Blocks   []slack.Block // the message
	Cut      bool          // the body was cut; the full text goes into the thread
	Full     string        // the whole prompt as plain text, for the thread
}

func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, true)
}

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}

// cutRunes truncates s to max runes with prompt's cut marker.
func cutRunes(s string, max int) string {
	out, _ := prompt.Truncate(s, max)
	return out
}

// escapedCut escapes s and cuts it (before escaping, so an entity is never
// split) until the escaped text fits max runes.
func escapedCut(s string, max int, esc func(string) string) (string, bool) {
	limit := max
	for {
		cut, was := prompt.Truncate(s, limit)
		e := esc(cut)
		if utf8.RuneCountInString(e) <= max || limit <= 1 {
			return e, was
		}
		limit = limit * 3 / 4
	}
}

// buttonValue binds a press to the approval and the exact call it showed.
func buttonValue(a *gate.Approval) string {
	return a.ID + "|" + prompt.DigestPrefix(a)
}

// parseButtonValue splits a button value made by buttonValue.
func parseButtonValue(v string) (id, digest string, ok bool) {
	id, digest, ok = strings.Cut(v, "|")
	if !ok || id == "" || len(id) > 256 || strings.Contains(digest, "|") {
		return "", "", false
	}
	return id, digest, true
}

// render lays out v's message at now (which phrases the deadline): the
// prompt with its buttons, or once final its outcome without them.
func render(v gate.View, now time.Time) view {
	if len(v.Items) > 0 {
		return renderGroup(v, now)
	}
	return layout(v.Approval, prompt.BuildView(v, now), false)
}

// renderScopes is a pending prompt at its Always scope step.
func renderScopes(a *gate.Approval, now time.Time) view {
	return layout(a, prompt.Build(a, now), true)
}

// layout lays out a's message from its content c; scopes shows the Always
// scope step instead of the prompt's buttons.
func layout(a *gate.Approval, c prompt.Content, scopes bool) view {
	v := view{Full: c.Text()}
	v.Fallback = cutRunes(prompt.Headline(c.Status)+": "+Escape(c.Title), maxFallbackText)
	if a.Status.Final() {
		v.Fallback = cutRunes(Escape(c.Title)+" — "+outcomeText(a), maxFallbackText)
	}

	blocks := []slack.Block{slack.NewHeaderBlock(plain(prompt.Headline(c.Status)))}
	title, _ := escapedCut(c.Title, maxSectionText-10, Escape)
	blocks = append(blocks, slack.NewSectionBlock(mrkdwn("*"+title+"*"), nil, nil))
	if len(c.Risks) > 0 {
		t, _ := escapedCut(strings.Join(c.Risks, " · "), maxSectionText-20, Escape)
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(":warning: *"+t+"*"), nil, nil))
	}

	var fields []*slack.TextBlockObject
	for _, f := range c.Fields {
		if len(fields) == maxFields {
			break
		}
		val, _ := escapedCut(f.Value, maxFieldText-len(f.Name)-10, Escape)
		fields = append(fields, mrkdwn("*"+f.Name+"*\n"+val))
	}
	if len(fields) > 0 {
		blocks = append(blocks, slack.NewSectionBlock(nil, fields, nil))
	}
	for _, w := range c.Warnings {
		t, _ := escapedCut(w, maxSectionText-20, Escape)
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(":warning: *"+t+"*"), nil, nil))
	}
	if c.Body != "" {
		label := "*" + c.BodyKind.Label() + "*\n"
		code, cut := escapedCut(c.Body, maxSectionText-sectionHeadroom, EscapeCode)
		v.Cut = cut
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(label+codeBlock(code)), nil, nil))
		if cut {
			blocks = append(blocks, slack.NewContextBlock("", mrkdwn("Cut short: the full text is in this message's thread.")))
		}
	}
	if len(c.Always) > 0 {
		t, _ := escapedCut("Always would save: "+strings.Join(c.Always, ", "), maxContextText, Escape)
		blocks = append(blocks, slack.NewContextBlock("", mrkdwn(t)))
	}

	if a.Status.Final() {
		blocks = append(blocks, slack.NewDividerBlock(),
			slack.NewSectionBlock(mrkdwn("*"+outcomeText(a)+"*"), nil, nil))
		v.Blocks = blocks
		return v
	}
	if c.Note != "" {
		blocks = append(blocks, slack.NewContextBlock("", mrkdwn(Escape(c.Note))))
	}
	if scopes {
		t, _ := escapedCut(prompt.ScopeQuestion(c), maxSectionText-10, Escape)
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(t), nil, nil), scopeActions(a))
	} else {
		blocks = append(blocks, actions(a, c))
	}
	v.Blocks = blocks
	return v
}

// choiceActions are the action ids of prompt's choices.
var choiceActions = map[prompt.ChoiceKind]string{
	prompt.ChoiceApprove: actApprove, prompt.ChoiceAlways: actAlways, prompt.ChoiceDeny: actDeny,
	prompt.ChoiceDenyReason: actDenyReason, prompt.ChoiceStop: actStop,
}

// actions returns the buttons of a pending prompt, from prompt's choices.
func actions(a *gate.Approval, c prompt.Content) *slack.ActionBlock {
	val := buttonValue(a)
	var elems []slack.BlockElement
	for _, ch := range prompt.Choices(a, c) {
		label := cutRunes(ch.Label, maxButtonText)
		if utf8.RuneCountInString(label) > maxButtonText || strings.Contains(label, "\n") {
			label = "Always…"
		}
		btn := slack.NewButtonBlockElement(choiceActions[ch.Kind], val, plain(label))
		switch ch.Kind {
		case prompt.ChoiceApprove:
			btn.Style = slack.StylePrimary
		case prompt.ChoiceDeny, prompt.ChoiceStop:
			btn.Style = slack.StyleDanger
		}
		elems = append(elems, btn)
	}
	return slack.NewActionBlock(actionsBlockID, elems...)
}

// scopeActions are the Always scope step's buttons: prompt's scopes, and Back.
func scopeActions(a *gate.Approval) *slack.ActionBlock {
	val := buttonValue(a)
	var elems []slack.BlockElement
	for _, s := range prompt.AlwaysChoices {
		btn := slack.NewButtonBlockElement(actScopePrefix+s.Key, val, plain("Always: "+s.Label))
		btn.Style = slack.StylePrimary
		elems = append(elems, btn)
	}
	elems = append(elems, slack.NewButtonBlockElement(actBack, val, plain("Back")))
	return slack.NewActionBlock(actionsBlockID, elems...)
}

// outcomeText is prompt.Outcome escaped, with a Slack decider shown as the
// mention this frontend recorded (edits do not notify anyone).
func outcomeText(a *gate.Approval) string {
	s := Escape(prompt.Outcome(a))
	if a.Via == Name && slackMention.MatchString(a.DecidedBy) {
		s = replaceEscaped(s, a.DecidedBy)
	}
	return s
}

// replaceEscaped turns the first escaped copy of mention in s back into
// the mention (a decider this frontend recorded, checked by the caller).
func replaceEscaped(s, mention string) string {
	return strings.Replace(s, Escape(mention), mention, 1)
}

// threadChunks splits the full prompt text into code-block messages for the
// thread under a cut prompt.
func threadChunks(full string) []string {
	var out []string
	runes := []rune(full)
	for len(runes) > 0 {
		n := min(len(runes), maxThreadChunk)
		part := string(runes[:n])
		runes = runes[n:]
		out = append(out, part)
	}
	for i, p := range out {
		head := ""
		if len(out) > 1 {
			head = fmt.Sprintf("Full text, part %d of %d:\n", i+1, len(out))
		} else {
			head = "Full text:\n"
		}
		out[i] = head + codeBlock(EscapeCode(p))
	}
	return out
}

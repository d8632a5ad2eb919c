package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// Texts shown to one user.
const (
	msgNotAllowed   = "You are not allowed to decide approvals here: your Slack user id is not in APPROVALBOT_SLACK_APPROVERS. Nothing was changed."
	msgBadButton    = "This button is not one approvalbot understands; nothing was decided."
	msgNotFound     = "approvalbot does not know this approval (any more); nothing was decided."
	msgMismatch     = "This prompt no longer matches the call waiting for a decision; nothing was decided."
	msgDecideFailed = "approvalbot could not record the decision; please try again."
)

// needsSyncAnswer reports whether the answer to cb depends on handling it
// (a modal submission); everything else is acknowledged at once.
func needsSyncAnswer(cb *slack.InteractionCallback) bool {
	return cb.Type == slack.InteractionTypeViewSubmission
}

// interaction handles one interactivity payload from either transport and
// returns what to answer Slack with (nil: an empty 200/ack). Both
// transports call it; only a view_submission's answer carries anything.
func (b *Bot) interaction(ctx context.Context, cb *slack.InteractionCallback) any {
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		for _, act := range cb.ActionCallback.BlockActions {
			b.blockAction(ctx, cb, act)
		}
	case slack.InteractionTypeViewSubmission:
		if cb.View.CallbackID == reasonCallbackID {
			return b.reasonSubmitted(ctx, cb)
		}
	}
	return nil
}

func channelOf(cb *slack.InteractionCallback) string {
	if cb.Channel.ID != "" {
		return cb.Channel.ID
	}
	return cb.Container.ChannelID
}

// blockAction handles one button press on a prompt.
func (b *Bot) blockAction(ctx context.Context, cb *slack.InteractionCallback, act *slack.BlockAction) {
	channel, user := channelOf(cb), cb.User.ID
	var kind prompt.ChoiceKind
	var scope string // an AlwaysChoices key
	switch act.ActionID {
	case actApproveAll, actDenyAll:
		b.batchAction(ctx, channel, user, act)
		return
	case actApprove:
		kind = prompt.ChoiceApprove
	case actAlways, actBack:
		kind = prompt.ChoiceAlways // the scope step (or back from it): nothing decided yet
	case actScopePrefix + prompt.ScopeKeySession, actScopePrefix + prompt.ScopeKeyAgent,
		actScopePrefix + prompt.ScopeKeyHour, actScopePrefix + prompt.ScopeKeyToday:
		kind, scope = prompt.ChoiceAlways, strings.TrimPrefix(act.ActionID, actScopePrefix)
	case actDeny:
		kind = prompt.ChoiceDeny
	case actDenyReason:
		kind = prompt.ChoiceDenyReason
	case actStop:
		kind = prompt.ChoiceStop
	default:
		return // not one of ours
	}
	id, digest, ok := parseButtonValue(act.Value)
	if !ok || len(digest) < 8 {
		b.ephemeral(ctx, channel, user, msgBadButton)
		return
	}
	if !b.isApprover(user) {
		b.logger.Warn("press by a non-approver refused", "user", user, "approval", id, "action", act.ActionID)
		b.ephemeral(ctx, channel, user, msgNotAllowed)
		return
	}
	switch {
	case kind == prompt.ChoiceDenyReason:
		b.openReason(ctx, cb, id, digest)
		return
	case kind == prompt.ChoiceAlways && scope == "":
		// The step decides nothing, but a button made for another input
		// (stale, forged) must not put it on the prompt either.
		if a, err := b.g.Get(ctx, id); err != nil {
			b.ephemeral(ctx, channel, user, msgNotFound)
			return
		} else if !prompt.DigestMatches(a, digest) {
			b.logger.Warn("Always step for another digest refused", "approval", id, "user", user)
			b.ephemeral(ctx, channel, user, msgMismatch)
			return
		}
		ts := cb.Container.MessageTs
		if ts == "" {
			ts = cb.Message.Timestamp
		}
		if err := b.editButtons(ctx, channel, ts, id, act.ActionID == actAlways); err != nil {
			b.logger.Warn("Always scope step failed", "approval", id, "err", err)
			b.ephemeral(ctx, channel, user, "Could not show the Always choices; try again.")
		}
		return
	}
	d := prompt.Decision(kind, "", "")
	if sc, ok := prompt.ScopeChoiceOf(scope); ok {
		d = prompt.AlwaysDecision(sc, b.cfg.Now())
	}
	d.Digest, d.By, d.Via = digest, "<@"+user+">", Name
	b.decide(ctx, channel, user, id, d)
}

// decide applies d and tells the presser what went wrong, if anything. The
// message itself is edited by the gate, for every decision wherever it
// was made.
func (b *Bot) decide(ctx context.Context, channel, user, id string, d gate.Decision) {
	a, err := b.g.Decide(ctx, id, d)
	if err == nil {
		b.logger.Info("decided", "approval", id, "user", user, "status", a.Status)
		return
	}
	b.ephemeral(ctx, channel, user, decideErrText(a, err))
}

// decideErrText explains a failed Decide to the person who pressed.
func decideErrText(a *gate.Approval, err error) string {
	switch {
	case errors.Is(err, gate.ErrAlreadyDecided) && a != nil:
		return "Already decided: " + outcomeText(a)
	case errors.Is(err, gate.ErrAlreadyDecided):
		return "This approval was already decided."
	case errors.Is(err, gate.ErrDigestMismatch):
		return msgMismatch
	case errors.Is(err, gate.ErrNotFound):
		return msgNotFound
	case errors.Is(err, gate.ErrInvalid):
		return "Nothing was decided: " + Escape(err.Error())
	}
	return msgDecideFailed
}

// reasonMeta is what the modal carries back on submit.
func reasonMeta(id, digest, channel string) string { return id + "|" + digest + "|" + channel }

func parseReasonMeta(s string) (id, digest, channel string, ok bool) {
	parts := strings.Split(s, "|")
	if len(parts) != 3 || parts[0] == "" || len(parts[1]) < 8 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// openReason opens the deny-reason modal for approval id.
func (b *Bot) openReason(ctx context.Context, cb *slack.InteractionCallback, id, digest string) {
	channel, user := channelOf(cb), cb.User.ID
	a, err := b.g.Get(ctx, id)
	if err != nil {
		b.ephemeral(ctx, channel, user, msgNotFound)
		return
	}
	if a.Status.Final() {
		b.ephemeral(ctx, channel, user, "Already decided: "+outcomeText(a))
		return
	}
	c := prompt.Build(a, b.cfg.Now())
	title, _ := escapedCut(c.Title, maxSectionText-10, Escape)
	input := slack.NewPlainTextInputBlockElement(plain("Why is this denied? The agent sees this."), reasonActionID)
	input.Multiline = true
	input.MaxLength = 1000
	modal := slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain("Deny with reason"),
		Submit:          plain("Deny"),
		Close:           plain("Cancel"),
		CallbackID:      reasonCallbackID,
		PrivateMetadata: reasonMeta(id, digest, channel),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(mrkdwn("*"+title+"*"), nil, nil),
			slack.NewInputBlock(reasonBlockID, plain("Reason"), nil, input),
		}},
	}
	if _, err := b.api.OpenViewContext(ctx, cb.TriggerID, modal); err != nil {
		b.logger.Warn("open deny-reason modal failed", "approval", id, "err", fmt.Errorf("views.open: %w", err))
		b.ephemeral(ctx, channel, user, "Could not open the reason dialog; use Deny, or try again.")
	}
}

// reasonSubmitted denies with the reason typed in the modal. The approver
// is checked again: the modal could be submitted by anyone who got it.
func (b *Bot) reasonSubmitted(ctx context.Context, cb *slack.InteractionCallback) any {
	fail := func(msg string) any {
		return &slack.ViewSubmissionResponse{ResponseAction: slack.RAErrors, Errors: map[string]string{reasonBlockID: msg}}
	}
	id, digest, channel, ok := parseReasonMeta(cb.View.PrivateMetadata)
	if !ok {
		return fail(msgBadButton)
	}
	user := cb.User.ID
	if !b.isApprover(user) {
		b.logger.Warn("reason submitted by a non-approver refused", "user", user, "approval", id)
		return fail(msgNotAllowed)
	}
	var reason string
	if cb.View.State != nil {
		reason = strings.TrimSpace(cb.View.State.Values[reasonBlockID][reasonActionID].Value)
	}
	a, err := b.g.Decide(ctx, id, gate.Decision{Reason: reason, Digest: digest, By: "<@" + user + ">", Via: Name})
	if err != nil {
		if errors.Is(err, gate.ErrAlreadyDecided) && a != nil {
			return fail("Already decided: " + prompt.Outcome(a))
		}
		return fail(strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(decideErrText(a, err)))
	}
	b.logger.Info("denied with reason", "approval", id, "user", user, "channel", channel)
	return nil
}

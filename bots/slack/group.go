package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// Grouped views (gate.View with Items): one message lists every call of
// an agent session, pending ones in full with Approve N / Deny N, and
// "Approve all N" / "Deny all", whose value is the gate's batch id and
// digest: the press decides exactly the calls the view was rendered with.

// Action ids of a grouped view's batch buttons.
const (
	actApproveAll = "approve_all"
	actDenyAll    = "deny_all"
)

// maxGroupBlocks keeps a grouped view within Slack's 50 blocks a message.
const maxGroupBlocks = 50

// Groups implements gate.GroupNotifier.
func (b *Bot) Groups() bool { return !b.cfg.NoGroups }

func batchValue(bt *gate.Batch) string {
	d := bt.Digest()
	if len(d) > prompt.BatchDigestLen {
		d = d[:prompt.BatchDigestLen]
	}
	return bt.ID + "|" + d
}

// renderGroup lays out a grouped view.
func renderGroup(v gate.View, now time.Time) view {
	g := prompt.BuildGroup(v, now)
	out := view{Full: g.Text()}
	out.Fallback = cutRunes(Escape(g.Title), maxFallbackText)
	blocks := []slack.Block{slack.NewHeaderBlock(plain(cutRunes(g.Title, 150)))}
	var fields []*slack.TextBlockObject
	for _, f := range g.Fields {
		val, _ := escapedCut(f.Value, maxFieldText-len(f.Name)-10, Escape)
		fields = append(fields, mrkdwn("*"+f.Name+"*\n"+val))
	}
	if len(fields) > 0 {
		blocks = append(blocks, slack.NewSectionBlock(nil, fields, nil))
	}
	if g.Note != "" {
		blocks = append(blocks, slack.NewContextBlock("", mrkdwn(Escape(g.Note))))
	}
	for _, it := range g.Items {
		a := it.Approval
		if a.Status.Final() {
			line, _ := escapedCut(it.Heading(), maxContextText-10, Escape)
			blocks = append(blocks, slack.NewContextBlock("", mrkdwn(line)))
			continue
		}
		var s strings.Builder
		s.WriteString("*" + Escape(it.Heading()) + "*\n")
		for _, r := range it.Content.Risks {
			s.WriteString(":warning: *" + Escape(r) + "*\n")
		}
		for _, w := range it.Content.Warnings {
			s.WriteString(":warning: *" + Escape(w) + "*\n")
		}
		for _, f := range it.ItemFields() {
			s.WriteString(Escape(f.Name) + ": " + Escape(f.Value) + "\n")
		}
		head, _ := escapedCut(s.String(), maxSectionText/2, func(x string) string { return x })
		body := ""
		if it.Content.Body != "" {
			code, cut := escapedCut(it.Content.Body, maxSectionText-sectionHeadroom-len([]rune(head)), EscapeCode)
			body = codeBlock(code)
			if cut {
				out.Cut = true
				body += "\n_Cut short: the full text is in this message's thread._"
			}
		}
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(head+body), nil, nil))
		approve := slack.NewButtonBlockElement(actApprove, buttonValue(a), plain(fmt.Sprintf("Approve %d", it.N)))
		approve.Style = slack.StylePrimary
		deny := slack.NewButtonBlockElement(actDeny, buttonValue(a), plain(fmt.Sprintf("Deny %d", it.N)))
		deny.Style = slack.StyleDanger
		reason := slack.NewButtonBlockElement(actDenyReason, buttonValue(a), plain(fmt.Sprintf("Deny %d with reason", it.N)))
		blocks = append(blocks, slack.NewActionBlock(fmt.Sprintf("%s_%d", actionsBlockID, it.N), approve, deny, reason))
	}
	var batch []slack.BlockElement
	for _, ch := range g.BatchChoices() {
		act, style := actApproveAll, slack.StylePrimary
		if ch.Kind == prompt.ChoiceDenyAll {
			act, style = actDenyAll, slack.StyleDanger
		}
		btn := slack.NewButtonBlockElement(act, batchValue(g.Batch), plain(ch.Label))
		btn.Style = style
		batch = append(batch, btn)
	}
	if len(batch) > 0 {
		blocks = append(blocks, slack.NewDividerBlock(), slack.NewActionBlock(actionsBlockID+"_batch", batch...))
	}
	if len(blocks) > maxGroupBlocks {
		blocks = append(blocks[:maxGroupBlocks-1], blocks[len(blocks)-1])
	}
	out.Blocks = blocks
	return out
}

// batchAction handles Approve all / Deny all.
func (b *Bot) batchAction(ctx context.Context, channel, user string, act *slack.BlockAction) {
	id, digest, ok := parseButtonValue(act.Value)
	if !ok || len(digest) < 8 {
		b.ephemeral(ctx, channel, user, msgBadButton)
		return
	}
	if !b.isApprover(user) {
		b.logger.Warn("batch press by a non-approver refused", "user", user, "batch", id)
		b.ephemeral(ctx, channel, user, msgNotAllowed)
		return
	}
	approve := act.ActionID == actApproveAll
	kind := prompt.ChoiceDenyAll
	if approve {
		kind = prompt.ChoiceApproveAll
	}
	d := prompt.BatchDecision(kind)
	d.By, d.Via = "<@"+user+">", Name
	rs, err := b.g.DecideBatch(ctx, id, digest, d)
	switch {
	case err == nil:
		b.logger.Info("batch decided", "batch", id, "calls", len(rs), "user", user)
		if out := prompt.BatchOutcome(approve, rs); !strings.HasPrefix(out, fmt.Sprintf("Approved %d of %d", len(rs), len(rs))) &&
			!strings.HasPrefix(out, fmt.Sprintf("Denied %d of %d", len(rs), len(rs))) {
			b.ephemeral(ctx, channel, user, Escape(out))
		}
	case errors.Is(err, gate.ErrNotFound):
		b.ephemeral(ctx, channel, user, "Every call of this batch is already decided; nothing was changed.")
	case errors.Is(err, gate.ErrDigestMismatch), errors.Is(err, gate.ErrInvalid):
		b.ephemeral(ctx, channel, user, msgMismatch)
	default:
		b.logger.Error("decide batch", "batch", id, "err", err)
		b.ephemeral(ctx, channel, user, msgDecideFailed)
	}
}

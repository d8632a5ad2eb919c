package slack

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// maxListed bounds the lines of a /approvalbot listing (one ephemeral message).
const maxListed = 30

const commandUsage = "Usage: `/approvalbot pending` · `/approvalbot rules [AGENT]` · `/approvalbot revoke RULE_ID` · `/approvalbot mode AGENT interactive|strict|approve_all`"

// msgReadNotAllowed refuses a read command to a non-approver or outside
// the approvals channel: the pending list carries the agents' commands.
const msgReadNotAllowed = "Only approvers can list pending calls and rules, and only in the approvals channel."

// command answers a /approvalbot slash command; the text is shown only to
// the user who typed it. Reading (pending, rules) needs an approver in the
// configured channel; changes need an approver.
func (b *Bot) command(ctx context.Context, cmd *slack.SlashCommand) string {
	args := strings.Fields(cmd.Text)
	if len(args) == 0 {
		return commandUsage
	}
	if verb := strings.ToLower(args[0]); (verb == "pending" || verb == "rules") &&
		(!b.isApprover(cmd.UserID) || cmd.ChannelID != b.cfg.Channel) {
		return msgReadNotAllowed
	}
	switch strings.ToLower(args[0]) {
	case "pending":
		return b.cmdPending(ctx)
	case "rules":
		agent := ""
		if len(args) > 1 {
			agent = args[1]
		}
		return b.cmdRules(ctx, agent)
	case "revoke":
		if len(args) != 2 {
			return commandUsage
		}
		if !b.isApprover(cmd.UserID) {
			return msgNotAllowed
		}
		r, err := b.g.RemoveRule(ctx, args[1], "<@"+cmd.UserID+">")
		if err != nil {
			return "Could not revoke rule " + Escape(args[1]) + ": " + Escape(err.Error())
		}
		b.logger.Info("rule revoked", "rule", r.ID, "user", cmd.UserID)
		return "Revoked rule " + Escape(r.ID) + " (" + Escape(r.Agent+" "+r.Tool+" "+r.Pattern) + ")."
	case "mode":
		if len(args) != 3 {
			return commandUsage
		}
		if !b.isApprover(cmd.UserID) {
			return msgNotAllowed
		}
		m := gate.Mode(args[2])
		if !m.Valid() {
			return "Unknown mode " + Escape(args[2]) + ". " + commandUsage
		}
		if err := b.g.SetMode(ctx, args[1], m, "<@"+cmd.UserID+">"); err != nil {
			return "Could not set the mode: " + Escape(err.Error())
		}
		b.logger.Info("mode set", "agent", args[1], "mode", m, "user", cmd.UserID)
		return "Mode of " + Escape(args[1]) + " is now " + Escape(string(m)) + "."
	}
	return commandUsage
}

func (b *Bot) cmdPending(ctx context.Context) string {
	as, err := b.g.List(ctx, gate.StatusPending)
	if err != nil {
		return "Could not list pending approvals: " + Escape(err.Error())
	}
	if len(as) == 0 {
		return "No approvals are pending."
	}
	lines := []string{fmt.Sprintf("%d pending:", len(as))}
	now := b.cfg.Now()
	for i, a := range as {
		if i == maxListed {
			lines = append(lines, fmt.Sprintf("… and %d more", len(as)-maxListed))
			break
		}
		c := prompt.Build(a, now)
		body := prompt.VisibleLine(c.Body)
		lines = append(lines, "• "+Escape(a.ID)+" — "+Escape(c.Title)+": "+Escape(cutRunes(body, 120))+
			" (deadline "+Escape(prompt.DeadlineText(a.Deadline, now))+")")
	}
	return strings.Join(lines, "\n")
}

func (b *Bot) cmdRules(ctx context.Context, agent string) string {
	rs, err := b.g.Rules(ctx, agent)
	if err != nil {
		return "Could not list rules: " + Escape(err.Error())
	}
	if len(rs) == 0 {
		return "No Always rules."
	}
	lines := []string{fmt.Sprintf("%d Always rules:", len(rs))}
	for i, r := range rs {
		if i == maxListed {
			lines = append(lines, fmt.Sprintf("… and %d more", len(rs)-maxListed))
			break
		}
		line := r.ID + " — " + r.Agent + " " + r.Tool + ": " + r.Pattern + " (" + prompt.RuleLifetime(r, b.cfg.Now())
		if r.CreatedBy != "" {
			line += ", by " + r.CreatedBy
		}
		lines = append(lines, "• "+Escape(prompt.VisibleLine(line))+")")
	}
	return strings.Join(lines, "\n")
}

// commandAnswer is the ephemeral response to a slash command.
func commandAnswer(text string) map[string]any {
	return map[string]any{"response_type": "ephemeral", "text": text}
}

package slack

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/slack-go/slack"
)

// ProbeError is a failed Probe step, worded for the person setting the app
// up: what went wrong (Error) and what to do about it (Fix). Neither holds
// a token.
type ProbeError struct {
	msg, fix string
}

func (e *ProbeError) Error() string { return e.msg }

// Fix says what to do about the failure.
func (e *ProbeError) Fix() string { return e.fix }

// Probe checks the set-up with Slack the way the frontend will use it,
// changing nothing: auth.test (the bot token works) and
// conversations.info (the channel exists and the bot is a member, so it
// can post there). It needs neither the gate nor Run, so a Bot made by New
// with a nil Gate may call it (then Close it).
//
// passed lists what was confirmed, in order; err is the first failure, a
// *ProbeError. A transport failure and a refused token are told apart, so
// the fix names the right setting.
func (b *Bot) Probe(ctx context.Context) (passed []string, err error) {
	auth, err := b.api.AuthTestContext(ctx)
	if err != nil {
		var se slack.SlackErrorResponse
		if errors.As(err, &se) {
			return nil, &ProbeError{
				msg: "auth.test refused the bot token: " + b.redact(se.Err),
				fix: "set APPROVALBOT_SLACK_BOT_TOKEN to the app's Bot User OAuth Token (xoxb-...)",
			}
		}
		return nil, &ProbeError{
			msg: "auth.test: " + b.transportError(err),
			fix: "check network access to " + b.apiURL() + " (APPROVALBOT_SLACK_API_URL)",
		}
	}
	passed = append(passed, fmt.Sprintf("bot @%s in workspace %s", auth.User, auth.Team))
	ch, err := b.api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: b.cfg.Channel})
	if err != nil {
		why := b.transportError(err)
		var se slack.SlackErrorResponse
		if errors.As(err, &se) {
			why = b.redact(se.Err)
		}
		return passed, &ProbeError{
			msg: fmt.Sprintf("channel %s: %s", b.cfg.Channel, why),
			fix: "set APPROVALBOT_SLACK_CHANNEL to the channel id (not its name) and give the app channels:read",
		}
	}
	if !ch.IsMember {
		return passed, &ProbeError{
			msg: "the bot is not a member of " + b.cfg.Channel,
			fix: "invite it: /invite @" + auth.User + " in that channel",
		}
	}
	return append(passed, "the bot is a member of "+b.cfg.Channel), nil
}

// apiURL is the Web API root the bot calls.
func (b *Bot) apiURL() string {
	if b.cfg.APIURL == "" {
		return slack.APIURL
	}
	return b.cfg.APIURL
}

// transportError words a failed request without its URL and with the
// tokens redacted from what is left (the library sends the token in the
// body, but a proxy's error page could echo it).
func (b *Bot) transportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		return fmt.Sprintf("HTTP %d from the Web API", sc.Code)
	}
	return "request failed: " + b.redact(err.Error())
}

// redact removes the bot and app tokens from s.
func (b *Bot) redact(s string) string {
	for _, tok := range []string{b.cfg.BotToken, b.cfg.AppToken} {
		if tok != "" {
			s = strings.ReplaceAll(s, tok, "<token>")
		}
	}
	return s
}

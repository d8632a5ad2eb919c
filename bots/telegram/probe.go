package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// ProbeError is a failed Probe step, worded for the person setting the bot
// up: what went wrong (Error) and what to do about it (Fix). Neither holds
// the token, and it wraps nothing that could (the library's transport
// errors carry the request URL, token included).
type ProbeError struct {
	msg, fix string
}

func (e *ProbeError) Error() string { return e.msg }

// Fix says what to do about the failure.
func (e *ProbeError) Fix() string { return e.fix }

// Probe checks the set-up with Telegram the way Run will use it, changing
// nothing: getMe (the token works) and, when Config.ChatID is set, getChat
// (the bot can reach that chat). It needs neither the gate nor Run, so a
// Bot made by New with a nil Gate may call it (then Close it).
//
// passed lists what was confirmed, in order; err is the first failure, a
// *ProbeError. A transport failure and a refused token are told apart, so
// the fix names the right setting.
func (b *Bot) Probe(ctx context.Context) (passed []string, err error) {
	api := b.apiFor(ctx)
	me, err := api.GetMe()
	if err != nil {
		if code, desc, ok := refusal(err); ok {
			return nil, &ProbeError{
				msg: fmt.Sprintf("getMe refused the token: %d %s", code, b.redact(desc)),
				fix: "set APPROVALBOT_TELEGRAM_TOKEN to the token @BotFather gave you",
			}
		}
		return nil, &ProbeError{
			msg: "getMe: " + b.transportError(err),
			fix: "check network access to " + b.cfg.APIURL + " (APPROVALBOT_TELEGRAM_API_URL)",
		}
	}
	passed = append(passed, "token belongs to @"+me.UserName)
	if b.cfg.ChatID == 0 {
		return append(passed, "no APPROVALBOT_TELEGRAM_CHAT_ID: prompts go to the chat paired with /pair CODE (serve prints the code)"), nil
	}
	_, err = api.GetChat(tgbotapi.ChatInfoConfig{ChatConfig: tgbotapi.ChatConfig{ChatID: b.cfg.ChatID}})
	if err != nil {
		why := b.transportError(err)
		if code, desc, ok := refusal(err); ok {
			why = fmt.Sprintf("%d %s", code, b.redact(desc))
		}
		return passed, &ProbeError{
			msg: fmt.Sprintf("chat %d is not reachable: %s", b.cfg.ChatID, why),
			fix: "send /start to the bot from that chat (or add the bot to the group), and check APPROVALBOT_TELEGRAM_CHAT_ID",
		}
	}
	return append(passed, fmt.Sprintf("chat %d is reachable", b.cfg.ChatID)), nil
}

// refusal returns the Bot API's answer when err is one (the request
// arrived and Telegram said no), as opposed to a transport failure.
func refusal(err error) (code int, desc string, ok bool) {
	var te *tgbotapi.Error
	if errors.As(err, &te) {
		return te.Code, te.Message, true
	}
	return 0, "", false
}

// transportError words a failed request without its URL (which holds the
// token) and, to be sure, with the token redacted from what is left.
func (b *Bot) transportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return "request failed: " + b.redact(err.Error())
}

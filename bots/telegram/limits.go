package telegram

import (
	"time"

	"approvalbot/bots/outbox"
)

// Telegram Bot API limits.
const (
	// maxMessageLen is the longest message text, counted after entity
	// parsing (https://core.telegram.org/bots/api#sendmessage). We count
	// the HTML source in UTF-16 units, which is never less than what
	// Telegram counts, so a message we accept is one Telegram accepts.
	maxMessageLen = 4096
	// maxCallbackData is the longest callback_data, in bytes
	// (https://core.telegram.org/bots/api#inlinekeyboardbutton).
	maxCallbackData = 64
	// maxAnswerText is the longest answerCallbackQuery text
	// (https://core.telegram.org/bots/api#answercallbackquery).
	maxAnswerText = 200
	// maxPlaceholder is the longest ForceReply input_field_placeholder
	// (https://core.telegram.org/bots/api#forcereply).
	maxPlaceholder = 64
	// maxButtonLabel keeps a button's label readable on a phone; the API
	// sets no documented limit.
	maxButtonLabel = 48
)

// Sending limits from https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this:
// about one message per second to one chat, 30 per second overall, and
// 20 per minute to one group.
const (
	perChatInterval = time.Second
	overallInterval = time.Second / 30
	groupPerMinute  = 20
)

// DefaultLimits are Telegram's sending limits, with retry backoff from
// half a second to a minute.
func DefaultLimits() outbox.Limits {
	return outbox.Limits{
		PerDest:     perChatInterval,
		Overall:     overallInterval,
		GroupMax:    groupPerMinute,
		GroupWindow: time.Minute,
		BackoffMin:  500 * time.Millisecond,
		BackoffMax:  time.Minute,
	}
}

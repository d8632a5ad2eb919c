package slack

import (
	"regexp"
	"strings"
)

// Slack's mrkdwn gives meaning to &, < and > (mentions <@U1>, broadcasts
// <!channel>, links <http://x|y>), so every piece of agent text is escaped
// the way https://api.slack.com/reference/surfaces/formatting#escaping
// documents. Every mrkdwn text object is also sent with verbatim: true, so
// Slack does not turn bare URLs, #channels or @names into links itself.

// broadcastWord matches the words Slack may treat as broadcasts when a
// message is sent with link_names; they get a full-width at sign so they can
// never notify a channel, whatever the app's settings.
var broadcastWord = regexp.MustCompile(`(?i)@(channel|here|everyone)\b`)

// zwsp separates backticks so agent text cannot close a code block early.
const zwsp = "\u200b"

// Escape returns s made inert for mrkdwn: &, < and > escaped, broadcast
// words neutralised. Use it for every string that did not come from this
// package.
func Escape(s string) string {
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	return broadcastWord.ReplaceAllString(s, "＠$1")
}

// EscapeCode returns s escaped for the inside of a ``` code block: Escape,
// plus a zero-width space between consecutive backticks so a ``` in the
// agent's text cannot end the block and let the rest be formatted.
func EscapeCode(s string) string {
	s = Escape(s)
	if !strings.Contains(s, "``") {
		return s
	}
	var b strings.Builder
	prevTick := false
	for _, r := range s {
		if r == '`' && prevTick {
			b.WriteString(zwsp)
		}
		prevTick = r == '`'
		b.WriteRune(r)
	}
	return b.String()
}

// codeBlock wraps escaped code in a ``` block. A body that ends in a
// backtick gets a zero-width space so the fence stays three backticks.
func codeBlock(escaped string) string {
	if strings.HasSuffix(escaped, "`") {
		escaped += zwsp
	}
	if strings.HasPrefix(escaped, "`") {
		escaped = zwsp + escaped
	}
	return "```" + escaped + "```"
}

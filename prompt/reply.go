package prompt

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Replies in words (DESIGN.md, Frontends): in chat, a reply to a prompt
// can decide it. The grammar is small and deterministic, and lopsided on
// purpose: an approval must be one of a few exact phrases ("yes", "ok",
// "lgtm", 👍, ...), while anything that starts like a refusal is a
// refusal, the rest of the text its reason. Whatever else is unclear and
// decides nothing.

// ReplyKind is what a reply in words asks for.
type ReplyKind string

// Reply kinds.
const (
	ReplyUnclear ReplyKind = ""
	ReplyApprove ReplyKind = "approve"
	ReplyAlways  ReplyKind = "always" // then the scope step, unless Scope says
	ReplyDeny    ReplyKind = "deny"
	ReplyStop    ReplyKind = "stop"
)

// Reply is a parsed reply in words.
type Reply struct {
	Kind   ReplyKind
	Reason string // for deny and stop: what the person wrote after the word
	// Scope is the Always scope named in the reply ("always for this
	// session"), its key in AlwaysChoices; "" asks with the scope step.
	Scope string
}

// ReplyHelp is the one line an unclear reply gets.
const ReplyHelp = `Not understood; nothing was decided. Reply "yes", "always", "no", "no, REASON" or "stop".`

// maxReplyLen bounds what is parsed; a longer reply is unclear.
const maxReplyLen = 2000

// approveWords are the whole replies that approve, after normalization.
var approveWords = map[string]bool{
	"yes": true, "y": true, "yep": true, "yeah": true, "yup": true, "ok": true, "okay": true, "k": true,
	"approve": true, "approved": true, "approve it": true, "lgtm": true, "sure": true, "go": true,
	"go ahead": true, "do it": true, "allow": true, "allowed": true, "ship it": true, "fine": true,
	"yes please": true, "ok go": true, "looks good": true, "👍": true, "✅": true, "👌": true,
}

// alwaysScopes are the words after "always" that name a scope choice.
var alwaysScopes = map[string]string{
	"":                 "",
	"session":          ScopeKeySession,
	"this session":     ScopeKeySession,
	"for this session": ScopeKeySession,
	"agent":            ScopeKeyAgent,
	"this agent":       ScopeKeyAgent,
	"for this agent":   ScopeKeyAgent,
	"forever":          ScopeKeyAgent,
	"1h":               ScopeKeyHour,
	"1 hour":           ScopeKeyHour,
	"an hour":          ScopeKeyHour,
	"for an hour":      ScopeKeyHour,
	"for 1 hour":       ScopeKeyHour,
	"today":            ScopeKeyToday,
	"for today":        ScopeKeyToday,
}

// alwaysWords start an Always reply.
var alwaysWords = []string{"always allow", "allow always", "always approve", "always", "♾️", "♾"}

// denyWords start a refusal; the rest, after a separator, is the reason.
var denyWords = []string{"deny", "denied", "no", "n", "nope", "nah", "reject", "rejected", "refuse",
	"don't", "dont", "do not", "never", "👎", "❌", "⛔"}

// stopWords start a stop; the rest is the reason.
var stopWords = []string{"stop", "halt", "abort", "🛑"}

// ParseReply reads a reply in words. It never decides on a guess: a reply
// it cannot read exactly is ReplyUnclear.
func ParseReply(text string) Reply {
	if len(text) > maxReplyLen || !utf8.ValidString(text) {
		return Reply{}
	}
	raw := strings.TrimSpace(text)
	norm := normalizeReply(raw)
	if norm == "" {
		return Reply{}
	}
	if approveWords[strings.TrimRight(norm, ".!")] {
		return Reply{Kind: ReplyApprove}
	}
	for _, w := range alwaysWords {
		if rest, ok := cutWord(norm, w); ok {
			if key, ok := alwaysScopes[strings.TrimRight(rest, ".!")]; ok {
				return Reply{Kind: ReplyAlways, Scope: key}
			}
			return Reply{}
		}
	}
	for _, w := range stopWords {
		if _, ok := cutWord(norm, w); ok {
			return Reply{Kind: ReplyStop, Reason: reasonAfter(raw, w)}
		}
	}
	for _, w := range denyWords {
		if _, ok := cutWord(norm, w); ok {
			return Reply{Kind: ReplyDeny, Reason: reasonAfter(raw, w)}
		}
	}
	return Reply{}
}

// normalizeReply lower-cases s, drops emoji skin tones and variation
// selectors other than in ♾️, and collapses white space.
func normalizeReply(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 0x1F3FB && r <= 0x1F3FF, r == 0xFE0F, r == 0x200D:
			continue
		case unicode.IsSpace(r):
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// cutWord reports whether s is the word w alone or w followed by a
// separator (space or punctuation), and returns what follows.
func cutWord(s, w string) (string, bool) {
	if !strings.HasPrefix(s, w) {
		return "", false
	}
	rest := s[len(w):]
	if rest == "" {
		return "", true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '_' {
		// "noted", "yes2": another word. An emoji word needs no separator.
		if last, _ := utf8.DecodeLastRuneInString(w); unicode.IsLetter(last) {
			return "", false
		}
	}
	return strings.TrimSpace(strings.TrimLeft(rest, " ,:;.!-—–")), true
}

// reasonAfter is the text of raw after its leading word w (matched
// without regard to case or spacing) and a separator, as the person wrote
// it; "" when nothing follows.
func reasonAfter(raw, w string) string {
	words := len(strings.Fields(w))
	rest := raw
	for range words {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		i := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(",:;!—–", r) })
		if i < 0 {
			return ""
		}
		rest = rest[i:]
	}
	rest = strings.TrimLeft(rest, " \t\n,:;.!-—–")
	rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), "because "))
	return VisibleLine(rest)
}

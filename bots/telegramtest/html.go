package telegramtest

import (
	"fmt"
	"strconv"
	"strings"
)

// Tags of Telegram's HTML parse mode
// (https://core.telegram.org/bots/api#html-style).
var allowedTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "code": true, "pre": true, "a": true,
	"tg-spoiler": true, "span": true, "blockquote": true, "tg-emoji": true,
}

// ParseHTML parses text in Telegram's HTML parse mode and returns the plain
// text a user would see. It is stricter than Telegram: every '<', '>' and
// '&' outside a tag or entity is an error, so a test catches any escaping
// slip.
func ParseHTML(s string) (string, error) {
	var out strings.Builder
	var stack []string
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("unclosed tag at byte %d", i)
			}
			tag := s[i+1 : i+end]
			i += end + 1
			if name, ok := strings.CutPrefix(tag, "/"); ok {
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return "", fmt.Errorf("unexpected end tag </%s>", name)
				}
				stack = stack[:len(stack)-1]
				continue
			}
			name, _, _ := strings.Cut(tag, " ")
			if !allowedTags[name] {
				return "", fmt.Errorf("unsupported start tag %q", name)
			}
			if strings.ContainsAny(tag, "<&") {
				return "", fmt.Errorf("bad attribute in <%s>", tag)
			}
			stack = append(stack, name)
		case '>':
			return "", fmt.Errorf("bare '>' at byte %d", i)
		case '&':
			end := strings.IndexByte(s[i:], ';')
			if end < 0 || end > 10 {
				return "", fmt.Errorf("bare '&' at byte %d", i)
			}
			ent := s[i+1 : i+end]
			switch ent {
			case "lt":
				out.WriteByte('<')
			case "gt":
				out.WriteByte('>')
			case "amp":
				out.WriteByte('&')
			case "quot":
				out.WriteByte('"')
			default:
				num, ok := strings.CutPrefix(ent, "#")
				if !ok {
					return "", fmt.Errorf("unknown entity &%s;", ent)
				}
				base := 10
				if h, ok := strings.CutPrefix(num, "x"); ok {
					num, base = h, 16
				}
				n, err := strconv.ParseInt(num, base, 32)
				if err != nil {
					return "", fmt.Errorf("bad entity &%s;", ent)
				}
				out.WriteRune(rune(n))
			}
			i += end + 1
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("unclosed <%s>", stack[len(stack)-1])
	}
	return out.String(), nil
}

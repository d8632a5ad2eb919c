package watch

import (
	"unicode"
	"unicode/utf8"
)

// KeyKind is what a key press is.
type KeyKind int

// Key kinds. KeyRune carries the rune in Key.Rune.
const (
	KeyUnknown KeyKind = iota
	KeyRune
	KeyEnter
	KeyBackspace
	KeyEsc
	KeyTab
	KeyUp
	KeyDown
	KeyLeft
	KeyRight
	KeyPgUp
	KeyPgDn
	KeyCtrlC
)

// Key is one key press.
type Key struct {
	Kind KeyKind
	Rune rune // for KeyRune
}

// Keys of the kinds without a rune, for tests and tables.
var (
	Enter     = Key{Kind: KeyEnter}
	Backspace = Key{Kind: KeyBackspace}
	Esc       = Key{Kind: KeyEsc}
	Tab       = Key{Kind: KeyTab}
	Up        = Key{Kind: KeyUp}
	Down      = Key{Kind: KeyDown}
	Left      = Key{Kind: KeyLeft}
	Right     = Key{Kind: KeyRight}
	PgUp      = Key{Kind: KeyPgUp}
	PgDn      = Key{Kind: KeyPgDn}
	CtrlC     = Key{Kind: KeyCtrlC}
)

// Rune is the key press of a printable character.
func Rune(r rune) Key { return Key{Kind: KeyRune, Rune: r} }

// ParseKeys decodes the bytes a terminal in raw mode sent into key presses.
// rest is an incomplete escape sequence or UTF-8 rune at the end of b, to be
// prefixed to the next read. Bytes that are no key this frontend knows
// (other control characters, unknown sequences, invalid UTF-8) become
// KeyUnknown, which the model ignores.
func ParseKeys(b []byte) (keys []Key, rest []byte) {
	for len(b) > 0 {
		c := b[0]
		switch {
		case c == 0x1b:
			k, n, ok := parseEscape(b)
			if !ok {
				return keys, b
			}
			keys = append(keys, k)
			b = b[n:]
			continue
		case c == '\r' || c == '\n':
			keys = append(keys, Enter)
		case c == 0x7f || c == 0x08:
			keys = append(keys, Backspace)
		case c == '\t':
			keys = append(keys, Tab)
		case c == 0x03:
			keys = append(keys, CtrlC)
		case c < 0x20:
			keys = append(keys, Key{Kind: KeyUnknown})
		case c < utf8.RuneSelf:
			keys = append(keys, Rune(rune(c)))
		default:
			if !utf8.FullRune(b) {
				return keys, b
			}
			r, n := utf8.DecodeRune(b)
			if r == utf8.RuneError || !unicode.IsPrint(r) {
				keys = append(keys, Key{Kind: KeyUnknown})
			} else {
				keys = append(keys, Rune(r))
			}
			b = b[n:]
			continue
		}
		b = b[1:]
	}
	return keys, nil
}

// maxEscape bounds an escape sequence, so garbage can never hold input back.
const maxEscape = 16

// parseEscape decodes an escape sequence at the start of b (b[0] is ESC).
// ok is false when b ends inside a sequence that may still complete.
func parseEscape(b []byte) (k Key, n int, ok bool) {
	if len(b) == 1 {
		// A lone ESC at the end of a read is the Esc key: terminals send a
		// sequence in one write, so it arrives in one read.
		return Esc, 1, true
	}
	switch b[1] {
	case '[':
		// CSI: parameters and intermediates (0x20-0x3F) up to a final byte.
		for i := 2; i < len(b); i++ {
			c := b[i]
			if c >= 0x40 && c <= 0x7e {
				return csiKey(b[2:i], c), i + 1, true
			}
			if c < 0x20 || c > 0x3f || i >= maxEscape {
				return Key{Kind: KeyUnknown}, i, true
			}
		}
		return Key{}, 0, false
	case 'O':
		// SS3: arrows in application cursor mode.
		if len(b) < 3 {
			return Key{}, 0, false
		}
		switch b[2] {
		case 'A':
			return Up, 3, true
		case 'B':
			return Down, 3, true
		case 'C':
			return Right, 3, true
		case 'D':
			return Left, 3, true
		}
		return Key{Kind: KeyUnknown}, 3, true
	case 0x1b:
		return Esc, 1, true
	}
	// ESC followed by another key (Alt+key, or Esc typed just before it):
	// the Esc alone; the next key is read on its own.
	return Esc, 1, true
}

func csiKey(params []byte, final byte) Key {
	switch final {
	case 'A':
		return Up
	case 'B':
		return Down
	case 'C':
		return Right
	case 'D':
		return Left
	case 'Z':
		return Left // Shift+Tab: back, as ← (the Always expiry, the call in focus)
	case '~':
		switch string(params) {
		case "5":
			return PgUp
		case "6":
			return PgDn
		case "3":
			return Backspace // Delete: the reason has no cursor, so it edits the end
		}
	}
	return Key{Kind: KeyUnknown}
}

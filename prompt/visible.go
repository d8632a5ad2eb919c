package prompt

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible returns s with every character a reader could not see, or that
// could make text look like something it is not, replaced by a visible
// marker: control characters (\r included), bidi controls such as U+202E,
// zero-width and other format characters, and invalid UTF-8 bytes.
// Newlines and tabs are kept, since a multi-line command is shown as such.
// Markers look like ⟨U+202E⟩ and ⟨0xFF⟩.
func Visible(s string) string { return visible(s, false) }

// VisibleLine is Visible for one-line fields: it also marks newlines and
// tabs, so a field can never appear to end early or push text elsewhere.
func VisibleLine(s string) string { return visible(s, true) }

// HasInvisible reports whether Visible would change s.
func HasInvisible(s string) bool { return Visible(s) != s }

func visible(s string, oneLine bool) string {
	if !needsMarking(s, oneLine) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "⟨0x%02X⟩", s[i])
		case hidden(r, oneLine):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsMarking(s string, oneLine bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || hidden(r, oneLine) {
			return true
		}
		i += size
	}
	return false
}

// hidden reports whether r must be shown as a marker.
func hidden(r rune, oneLine bool) bool {
	switch r {
	case '\n', '\t':
		return oneLine
	case utf8.RuneError:
		// A literal U+FFFD is visible; only invalid bytes are marked (above).
		return false
	}
	switch {
	case unicode.IsControl(r): // C0, DEL, C1
		return true
	case unicode.Is(unicode.Cf, r): // bidi controls, zero-width chars, BOM, tags, soft hyphen
		return true
	case unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r): // U+2028, U+2029 break lines
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF: // variation selectors
		return true
	case r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0: // Hangul fillers render blank
		return true
	case unicode.Is(unicode.Zs, r) && r != ' ': // NBSP and friends look like a space
		return true
	case unicode.Is(unicode.Co, r), unicode.Is(unicode.Cs, r), unicode.Is(unicode.Cn, r):
		return true // private use, surrogates, unassigned
	}
	return false
}

// Truncate returns s cut to at most max runes, the cut marked by a line
// that says how much is missing. It never splits a rune. A max too small
// for the marker yields the marker cut to max runes.
func Truncate(s string, max int) (string, bool) {
	if max < 0 {
		max = 0
	}
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s, false
	}
	// The marker's own length depends on the count it names; the count
	// is at most n, so reserve room for that many digits.
	marker := CutMarker(n)
	keep := max - utf8.RuneCountInString(marker)
	if keep <= 0 {
		return firstRunes(marker, max), true
	}
	return firstRunes(s, keep) + CutMarker(n-keep), true
}

// CutMarker is the text that ends content cut short, naming how many
// characters are missing.
func CutMarker(missing int) string {
	return fmt.Sprintf("\n… ✂ cut: %d more characters", missing)
}

// firstRunes returns the first n runes of s.
func firstRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

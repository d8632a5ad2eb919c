package watch

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tabWidth is how many columns a tab in a command or diff takes. Tabs are
// expanded so the wrapping below knows their width.
const tabWidth = 4

// wideRanges are the East Asian Wide and Fullwidth code points (and the
// emoji terminals draw two columns wide), from Unicode's EastAsianWidth.txt,
// merged into ranges. Coarse on purpose: a terminal's own table may differ on
// a few emoji, which at worst shifts a border by one column.
var wideRanges = [...][2]rune{
	{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC},
	{0x23F0, 0x23F0}, {0x23F3, 0x23F3}, {0x25FD, 0x25FE}, {0x2614, 0x2615},
	{0x2648, 0x2653}, {0x267F, 0x267F}, {0x2693, 0x2693}, {0x26A1, 0x26A1},
	{0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5}, {0x26CE, 0x26CE},
	{0x26D4, 0x26D4}, {0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5},
	{0x26FA, 0x26FA}, {0x26FD, 0x26FD}, {0x2705, 0x2705}, {0x270A, 0x270B},
	{0x2728, 0x2728}, {0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755},
	{0x2757, 0x2757}, {0x2795, 0x2797}, {0x27B0, 0x27B0}, {0x27BF, 0x27BF},
	{0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55}, {0x2E80, 0x303E},
	{0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xA4CF},
	{0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19},
	{0xFE30, 0xFE6F}, {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x16FE0, 0x16FE4},
	{0x17000, 0x18AFF}, {0x1B000, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF},
	{0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F2FF}, {0x1F300, 0x1F64F},
	{0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF},
	{0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
}

// runeWidth is the number of terminal columns r takes.
func runeWidth(r rune) int {
	switch {
	case r < 0x20 || (r >= 0x7F && r < 0xA0):
		// Never printed raw (prompt.Visible marks them); count them as
		// one column so a mistake cannot shrink a line.
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	i := sort.Search(len(wideRanges), func(i int) bool { return wideRanges[i][1] >= r })
	if i < len(wideRanges) && wideRanges[i][0] <= r {
		return 2
	}
	return 1
}

// textWidth is the number of columns s takes (s holds no escape sequences).
func textWidth(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

// expandTabs replaces tabs with spaces up to the next tab stop.
func expandTabs(line string) string {
	if !strings.ContainsRune(line, '\t') {
		return line
	}
	var b strings.Builder
	col := 0
	for _, r := range line {
		if r == '\t' {
			n := tabWidth - col%tabWidth
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col += runeWidth(r)
	}
	return b.String()
}

// wrap breaks text into lines of at most width columns. Nothing is dropped:
// a line is broken after a space when one is near the end, else anywhere
// (inside a word), and the spaces stay on the line they end, so joining the
// pieces of one source line gives it back. Newlines in text start new lines.
func wrap(text string, width int) []string {
	if width < 1 {
		width = 1
	}
	var out []string
	for _, src := range strings.Split(text, "\n") {
		out = append(out, wrapLine(expandTabs(src), width)...)
	}
	return out
}

func wrapLine(s string, width int) []string {
	if textWidth(s) <= width {
		return []string{s}
	}
	var out []string
	for s != "" {
		cut, w, lastSpace := 0, 0, -1
		for i, r := range s {
			rw := runeWidth(r)
			if w+rw > width {
				break
			}
			w += rw
			cut = i + utf8.RuneLen(r)
			if r == ' ' {
				lastSpace = cut
			}
		}
		if cut == len(s) {
			out = append(out, s)
			break
		}
		if cut == 0 { // one rune wider than the line: take it anyway
			_, size := utf8.DecodeRuneInString(s)
			cut = size
		} else if lastSpace > 0 && lastSpace*3 >= cut*2 {
			// Break after the last space in the final third of the line,
			// so words stay whole without leaving lines mostly empty.
			cut = lastSpace
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// truncate cuts s to at most width columns, marking the cut with "…". Only
// for one-line summaries (the log of what happened); a box never truncates.
func truncate(s string, width int) string {
	if textWidth(s) <= width {
		return s
	}
	if width < 1 {
		return ""
	}
	var b strings.Builder
	w := 0
	for _, r := range s {
		rw := runeWidth(r)
		if w+rw > width-1 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	b.WriteString("…")
	return b.String()
}

// pad fills s with spaces to width columns.
func pad(s string, width int) string {
	if n := width - textWidth(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

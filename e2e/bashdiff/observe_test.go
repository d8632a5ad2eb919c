//go:build e2e

package bashdiff

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	"approvalbot/shell"
)

// An executed command, as bash's xtrace or a stub's log showed it.
type executed struct {
	Argv []string
	From string // "xtrace" or "stub"
}

// parseStubLog reads the stub log: records of a decimal word count, then
// the words, each terminated by NUL.
func parseStubLog(b []byte) ([]executed, bool) {
	var out []executed
	fields := strings.Split(string(b), "\x00")
	// A well-formed log ends with a NUL, so the last field is empty.
	if len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	for i := 0; i < len(fields); {
		n, err := strconv.Atoi(fields[i])
		if err != nil || n < 1 || i+1+n > len(fields) {
			return out, false
		}
		out = append(out, executed{Argv: fields[i+1 : i+1+n], From: "stub"})
		i += 1 + n
	}
	return out, true
}

var (
	// An assignment as xtrace prints it: NAME=, NAME+=, NAME[sub]=.
	assignRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\[[^\n]*\])?\+?=`)
	// An array assignment, printed as source text (quotes unbalanced for
	// our parser): skip the physical line.
	arrayAssignRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\+?=\(`)
)

// parseXtrace reads bash's xtrace output (PS4 "+ ", one more "+" per
// nesting level) and returns the simple commands it shows. Words are
// printed raw when plain, else single-quoted (a quote inside as the
// sequence quote, backslash, quote, quote), in $'...' in some versions; a
// quoted word may span lines. Records that are not the
// execution of a simple command are dropped: assignments, [[ ]], (( )),
// arithmetic for, and the headers of for, select and case.
func parseXtrace(b []byte) []executed {
	s := string(b)
	var out []executed
	// xtrace prints `declare -a a=(x y)` as the assignment `a=(x y)`, then
	// `declare -a a`: the word goes back into the declaration.
	arrays := map[string]string{}
	i := 0
	for i < len(s) {
		// A record starts with '+' at the beginning of a line; anything
		// else (continuation lines of a [[ ]] record) is skipped.
		if s[i] != '+' {
			i = nextLine(s, i)
			continue
		}
		for i < len(s) && s[i] == '+' {
			i++
		}
		if i < len(s) && s[i] == ' ' {
			i++
		}
		rest := s[i:]
		if m := arrayAssignRe.FindString(rest); m != "" {
			name := strings.TrimSuffix(strings.TrimSuffix(m, "=("), "+")
			j := strings.IndexByte(rest, '\n')
			if j < 0 {
				j = len(rest)
			}
			arrays[name] = rest[:j]
			i = nextLine(s, i)
			continue
		}
		if strings.HasPrefix(rest, "[[ ") || strings.HasPrefix(rest, "((") {
			i = nextLine(s, i)
			continue
		}
		words, raw, end := parseRecord(s, i)
		i = end
		if len(words) == 0 {
			continue
		}
		if assignRe.MatchString(raw[0]) {
			continue // an assignment (xtrace prints prefix assignments on their own records)
		}
		switch raw[0] {
		case "for", "select", "case":
			continue
		case "declare", "typeset", "local", "export", "readonly":
			for k, w := range words[1:] {
				if a, ok := arrays[w]; ok && raw[k+1] == w {
					words[k+1] = a
				}
			}
		}
		arrays = map[string]string{}
		out = append(out, executed{Argv: words, From: "xtrace"})
	}
	return out
}

func nextLine(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(s)
}

// parseRecord parses words from s[i:] up to an unquoted newline; it
// returns the words, each word's raw text up to its first quote, and the
// index after the newline.
func parseRecord(s string, i int) (words, raws []string, end int) {
	var cur strings.Builder
	var raw strings.Builder
	inWord, quoted := false, false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			raws = append(raws, raw.String())
		}
		cur.Reset()
		raw.Reset()
		inWord, quoted = false, false
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n':
			flush()
			return words, raws, i + 1
		case c == ' ' || c == '\t':
			flush()
			i++
		case c == '\'':
			inWord, quoted = true, true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
				continue
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case c == '$' && i+1 < len(s) && s[i+1] == '\'':
			inWord, quoted = true, true
			v, n := ansiC(s[i+2:])
			cur.WriteString(v)
			i += 2 + n
		case c == '\\' && i+1 < len(s):
			inWord, quoted = true, true
			cur.WriteByte(s[i+1])
			i += 2
		default:
			inWord = true
			cur.WriteByte(c)
			if !quoted {
				raw.WriteByte(c)
			}
			i++
		}
	}
	flush()
	return words, raws, len(s)
}

// ansiC decodes the body of $'...' up to its closing quote; it returns the
// value and the number of bytes consumed (the quote included).
func ansiC(s string) (string, int) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			return b.String(), i + 1
		}
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && isHex(s[j]) {
				j++
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 8)
			b.WriteByte(byte(v))
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(v))
			i = j - 1
		default:
			b.WriteByte(e) // \\, \', \" and anything else
		}
	}
	return b.String(), len(s)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// reported is one command the analyzer reported, ready to match.
type reported struct {
	Argv  []string
	Globs []bool
}

func reportedOf(an *shell.Analysis) []reported {
	var out []reported
	for _, c := range an.Commands {
		g := globsOf(c)
		if len(g) != len(c.Argv) {
			g = nil
		}
		out = append(out, reported{Argv: c.Argv, Globs: g})
		// Transparent wrappers (timeout, env, command, ...) are judged
		// through the command they run and reported with it.
		for _, v := range c.Via {
			out = append(out, reported{Argv: v})
		}
	}
	return out
}

// covered reports whether e is one of the reported commands.
func covered(e executed, reps []reported) bool {
	for _, r := range reps {
		if matchArgv(r, e) {
			return true
		}
	}
	return false
}

// matchArgv matches an executed argv against a reported one: Dyn inside a
// word matches any substring, a whole-word Dyn one word, a glob word zero
// or more file names it matches or its own text. A stub's argv0 is the
// program's base name, so it also matches a reported path with that base.
func matchArgv(r reported, e executed) bool {
	if len(r.Argv) == 0 || len(e.Argv) == 0 {
		return false
	}
	m := &matcher{r: r, e: e.Argv, stub: e.From == "stub", memo: map[[2]int]bool{}}
	return m.match(0, 0)
}

type matcher struct {
	r    reported
	e    []string
	stub bool
	memo map[[2]int]bool
}

func (m *matcher) match(i, j int) bool {
	key := [2]int{i, j}
	if v, ok := m.memo[key]; ok {
		return v
	}
	v := m.match1(i, j)
	m.memo[key] = v
	return v
}

func (m *matcher) match1(i, j int) bool {
	if i == len(m.r.Argv) {
		return j == len(m.e)
	}
	w := m.r.Argv[i]
	if m.r.Globs != nil && m.r.Globs[i] && i > 0 {
		// Zero or more expansions, or the pattern left as it is.
		if j < len(m.e) && wordMatch(w, m.e[j]) && m.match(i+1, j+1) {
			return true
		}
		for k := j; ; k++ {
			if m.match(i+1, k) {
				return true
			}
			if k >= len(m.e) || !globMatch(w, m.e[k]) {
				return false
			}
		}
	}
	if j >= len(m.e) {
		return false
	}
	if i == 0 && m.stub && !strings.Contains(w, shell.Dyn) && path.Base(w) == m.e[0] {
		return m.match(1, 1)
	}
	return wordMatch(w, m.e[j]) && m.match(i+1, j+1)
}

var wordRes = map[string]*regexp.Regexp{}

// wordMatch matches a reported word against an executed one; Dyn stands
// for any substring.
func wordMatch(w, got string) bool {
	if !strings.Contains(w, shell.Dyn) {
		return w == got
	}
	re, ok := wordRes[w]
	if !ok {
		parts := strings.Split(w, shell.Dyn)
		for k, p := range parts {
			parts[k] = regexp.QuoteMeta(p)
		}
		re = regexp.MustCompile(`(?s)\A` + strings.Join(parts, `.*`) + `\z`)
		wordRes[w] = re
	}
	return re.MatchString(got)
}

var globRes = map[string]*regexp.Regexp{}

// globMatch reports whether bash could expand pattern w to the word got:
// *, ? and [...] as in path.Match (not crossing /), a Dyn part as any
// text (an unquoted expansion may hold anything, slashes and spaces
// included), and, in a pattern without Dyn, a name with a leading dot only
// matched by a literal leading dot.
func globMatch(w, got string) bool {
	re, ok := globRes[w]
	if !ok {
		re = regexp.MustCompile(`(?s)\A` + globRegexp(w) + `\z`)
		globRes[w] = re
	}
	if !re.MatchString(got) {
		return false
	}
	if strings.Contains(w, shell.Dyn) {
		return true
	}
	pc, gc := strings.Split(w, "/"), strings.Split(got, "/")
	if len(pc) != len(gc) {
		return false
	}
	for k := range gc {
		if strings.HasPrefix(gc[k], ".") && !strings.HasPrefix(pc[k], ".") {
			return false
		}
	}
	return true
}

// globRegexp translates a pattern to a regular expression.
func globRegexp(w string) string {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		switch c := w[i]; c {
		case '*':
			b.WriteString(`[^/]*`)
		case '?':
			b.WriteString(`[^/]`)
		case 0:
			b.WriteString(`.*`)
		case '[':
			j := i + 1
			if j < len(w) && (w[j] == '!' || w[j] == '^') {
				j++
			}
			if j < len(w) && w[j] == ']' {
				j++
			}
			for j < len(w) && w[j] != ']' {
				j++
			}
			if j >= len(w) {
				b.WriteString(`\[`)
				continue
			}
			class := w[i+1 : j]
			neg := strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^")
			if neg {
				class = class[1:]
			}
			var cb strings.Builder
			for _, r := range class {
				if r == '\\' || r == ']' || r == '[' || r == '^' {
					cb.WriteByte('\\')
				}
				cb.WriteRune(r)
			}
			if neg {
				b.WriteString(`[^/` + cb.String() + `]`)
			} else {
				b.WriteString(`[` + cb.String() + `]`)
			}
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

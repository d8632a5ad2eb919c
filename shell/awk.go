package shell

// awk: programs that only read and print are understood.

import (
	"strings"
)

func isAwkIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// awk judges awk: the program must not run commands, read with getline or
// redirect output, except to /dev/stdout and /dev/stderr. The text is
// scanned raw, without trusting where strings or regular expressions end,
// since a regex literal can hide a quote.
func (a *analyzer) awk(name string, fs []field) (string, string) {
	args := fs[1:]
	var prog *field
	var operands []field
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dyn || f.glob {
			if prog == nil {
				return "not understood: an awk program only known at run time", ""
			}
			operands = append(operands, f)
			continue
		}
		s := f.s
		switch {
		case prog != nil || s == "-" || !strings.HasPrefix(s, "-"):
			if prog == nil {
				prog = &args[i]
				continue
			}
			operands = append(operands, f)
		case s == "--":
			if prog == nil && i+1 < len(args) {
				i++
				prog = &args[i]
			}
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case s == "-F" || s == "-v":
			i++
			if i < len(args) && args[i].dyn && s == "-v" {
				return "not understood: awk -v with a value only known at run time", ""
			}
			if i < len(args) {
				if why := splitValue(args[i], s, "awk"); why != "" {
					return "not understood: " + why, ""
				}
			}
		case strings.HasPrefix(s, "-F") || strings.HasPrefix(s, "-v"):
		default:
			return "not understood: awk option " + s, ""
		}
	}
	if prog == nil {
		return "not understood: awk without a program", ""
	}
	if w := awkProgram(prog.s); w != "" {
		return "", "awk " + w
	}
	for _, f := range operands {
		if !f.dyn && isAssignWord(f.s) {
			continue // var=value
		}
		a.addRead(f, name, false)
	}
	return "", ""
}

// awkProgram says why an awk program may run commands, read or write
// files. Strings and regular expressions are blanked first, telling a
// regex from a division as awk does; where that is unclear, it asks.
func awkProgram(p string) string {
	blank, ok := awkBlank(p)
	if !ok {
		return "program whose strings or regular expressions are unclear"
	}
	for _, w := range []string{"system", "getline", "@", "|", "ARGV", "ARGC"} {
		if strings.Contains(strings.ReplaceAll(blank, "||", "  "), w) {
			return "program uses " + w
		}
	}
	for i := 0; i < len(blank); i++ {
		if blank[i] != '>' {
			continue
		}
		if i+1 < len(blank) && blank[i+1] == '=' {
			i++
			continue
		}
		if !awkInPrint(blank, i) {
			continue // a comparison
		}
		rest := strings.TrimLeft(p[i+1:], " \t>")
		ok := false
		for _, sink := range []string{`"/dev/stderr"`, `"/dev/stdout"`} {
			if after, found := strings.CutPrefix(rest, sink); found {
				after = strings.TrimLeft(after, " \t")
				ok = after == "" || strings.IndexByte(";}\n", after[0]) >= 0
			}
		}
		if !ok {
			return "program may redirect output to a file"
		}
	}
	return ""
}

// awkInPrint reports whether the `>` at blank[i] is an output redirection:
// it follows print or printf in the same statement, outside parentheses.
func awkInPrint(blank string, i int) bool {
	depth := 0
	for j := i - 1; j >= 0; j-- {
		switch c := blank[j]; c {
		case ')':
			depth++
		case '(':
			if depth == 0 {
				return false // inside parentheses: a comparison
			}
			depth--
		case ';', '{', '}':
			// Not a newline: a print statement goes on after `,`, `&&`
			// or a backslash.
			return false
		default:
			if depth == 0 && strings.HasPrefix(blank[j:], "print") && (j == 0 || !isAwkIdentByte(blank[j-1])) {
				return true
			}
		}
	}
	return false
}

// awkBracketEnd returns the index of the `]` that ends the bracket
// expression starting at b[j], as POSIX reads it (a `]` first, after an
// optional `^`, is a member; [:class:] and the like are members); ok is
// false when it holds a `/`, a `"`, a newline or a `\]`, on which the awks
// differ (`/[]/]"/` hid a string from one of them).
func awkBracketEnd(b []byte, j int) (int, bool) {
	k := j + 1
	if k < len(b) && b[k] == '^' {
		k++
	}
	if k < len(b) && b[k] == ']' {
		k++
	}
	for ; k < len(b) && b[k] != ']'; k++ {
		switch b[k] {
		case '/', '"', '\n':
			return 0, false
		case '\\':
			if k+1 < len(b) && (b[k+1] == ']' || b[k+1] == '/' || b[k+1] == '"') {
				return 0, false
			}
			k++
		case '[':
			if k+1 < len(b) && (b[k+1] == ':' || b[k+1] == '.' || b[k+1] == '=') {
				end := strings.Index(string(b[k+2:]), string([]byte{b[k+1], ']'}))
				if end < 0 || strings.ContainsAny(string(b[k+2:k+2+end]), "/\"\n\\") {
					return 0, false
				}
				k += 2 + end + 1
			}
		}
	}
	if k >= len(b) {
		return 0, false
	}
	return k, true
}

// awkBlank replaces the contents of strings, regular expressions and
// comments with spaces, keeping every other byte where it was.
func awkBlank(p string) (string, bool) {
	b := []byte(p)
	operand := false // the previous token ends an operand: `/` divides
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			j := i + 1
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
				if j < len(b) && b[j] == '\n' {
					return "", false
				}
			}
			if j >= len(b) {
				return "", false
			}
			blank(b, i+1, j)
			i, operand = j+1, true
		case c == '/' && !operand:
			j := i + 1
			for ; j < len(b) && b[j] != '/'; j++ {
				switch b[j] {
				case '\\':
					j++
				case '\n':
					return "", false
				case '[':
					// awks differ on a `/` inside brackets, and on a `\]`.
					k, ok := awkBracketEnd(b, j)
					if !ok {
						return "", false
					}
					j = k
				}
			}
			if j >= len(b) {
				return "", false
			}
			blank(b, i+1, j)
			i, operand = j+1, true
		case c == '/' && operand:
			// Read as a division. Were another awk to read a regex here
			// (the awks disagree after some tokens), the text up to the
			// next / would be a regex instead: when it holds a " or #,
			// the two readings put strings and comments in different
			// places, and code hidden in one is code in the other.
			moved := false
			for j := i + 1; j < len(b) && b[j] != '\n'; j++ {
				if b[j] == '\\' {
					j++
					continue
				}
				if b[j] == '/' {
					if moved {
						return "", false
					}
					break // (no closing / : no regex reading)
				}
				moved = moved || b[j] == '"' || b[j] == '#'
			}
			i, operand = i+1, false
		case c == '#':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case isAwkIdentByte(c) && !(c >= '0' && c <= '9'):
			j := i
			for j < len(b) && isAwkIdentByte(b[j]) {
				j++
			}
			switch string(b[i:j]) {
			case "case", "default", "switch", "func", "nextfile", "BEGINFILE", "ENDFILE":
				// Keywords in gawk, variables in mawk (Debian's awk): a "/"
				// after them is a regex in one and a division in the other.
				return "", false
			case "print", "printf", "return", "in", "if", "else", "while", "for", "do",
				"getline", "delete", "exit", "next", "BEGIN", "END", "function", "length":
				operand = false
				if string(b[i:j]) == "length" {
					return "", false // `length / x /` is read differently by awks
				}
			default:
				operand = true
			}
			i = j
		case c >= '0' && c <= '9' || c == '.':
			for i < len(b) && (isAwkIdentByte(b[i]) || b[i] == '.') {
				i++
			}
			operand = true
		case c == ')' || c == ']':
			i, operand = i+1, true
		case c == '+' && i+1 < len(b) && b[i+1] == '+', c == '-' && i+1 < len(b) && b[i+1] == '-':
			i += 2 // x++ stays an operand; ++x is followed by one
			j := i
			for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
				j++
			}
			if j < len(b) && b[j] == '/' {
				// gawk divides after x++; mawk starts a regex (x++ /"/).
				return "", false
			}
		case c == ' ' || c == '\t':
			i++
		case c == '\\' && i+1 < len(b) && b[i+1] == '\n':
			i += 2
		default:
			i, operand = i+1, false
		}
	}
	return string(b), true
}

// blank replaces b[from:to] with spaces.
func blank(b []byte, from, to int) {
	for k := from; k < to; k++ {
		b[k] = ' '
	}
}

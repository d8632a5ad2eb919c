package shell

// sed: a positive parser of GNU sed scripts, and the second-line hazard
// check kept for gsed.

import (
	"strings"
)

// sedHazard reports "in-place" for sed -i, "script" for a script that may
// execute or write files (or cannot be read), "" otherwise.
func sedHazard(a []field) string {
	var scripts []string
	sandbox, haveScript := false, false
	script := ""
	for i := 0; i < len(a); i++ {
		s := a[i].s
		switch {
		case s == "--":
			if !haveScript && i+1 < len(a) {
				script, haveScript = a[i+1].s, true
			}
			i = len(a)
		case strings.HasPrefix(s, "--"):
			name, val, hasVal := strings.Cut(s[2:], "=")
			switch {
			case strings.HasPrefix("in-place", name) && len(name) >= 2:
				return "in-place"
			case name == "sandbox":
				sandbox = true
			case name == "expression" || strings.HasPrefix("expression", name) && len(name) >= 2:
				if !hasVal && i+1 < len(a) {
					i++
					val = a[i].s
				}
				scripts = append(scripts, val)
			case name == "file" || strings.HasPrefix("file", name) && len(name) >= 2:
				return "script" // the script is in a file we do not read
			case name == "line-length":
				if !hasVal {
					i++
				}
			}
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				switch s[j] {
				case 'i':
					return "in-place"
				case 'f':
					return "script"
				case 'e', 'l':
					v := s[j+1:]
					if v == "" && i+1 < len(a) {
						i++
						v = a[i].s
					}
					if s[j] == 'e' {
						scripts = append(scripts, v)
					}
					j = len(s)
				}
			}
		default:
			if !haveScript && len(scripts) == 0 {
				script, haveScript = s, true
			}
		}
	}
	if sandbox {
		return ""
	}
	if haveScript && len(scripts) == 0 {
		scripts = append(scripts, script)
	}
	for _, sc := range scripts {
		if strings.Contains(sc, Dyn) || sedScriptUnsafe(sc) {
			return "script"
		}
	}
	return ""
}

// sedScriptUnsafe reports a sed script that may execute commands (e, s///e)
// or write files (w, W, s///w); anything it cannot parse counts as unsafe.
func sedScriptUnsafe(s string) bool {
	i, n := 0, len(s)
	skipBlanks := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	for i < n {
		switch s[i] {
		case ' ', '\t', '\n', ';':
			i++
			continue
		case '#':
			for i < n && s[i] != '\n' {
				i++
			}
			continue
		}
		var ok bool
		if i, ok = sedAddr(s, i); !ok {
			return true
		}
		skipBlanks()
		if i < n && s[i] == ',' {
			i++
			skipBlanks()
			if i, ok = sedAddr(s, i); !ok {
				return true
			}
		}
		skipBlanks()
		for i < n && s[i] == '!' {
			i++
			skipBlanks()
		}
		if i >= n {
			return false
		}
		c := s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F', 'l', 'L', 'q', 'Q':
			skipBlanks()
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < n && s[i] != '\n' && s[i] != ';' {
				i++
			}
		case 'a', 'i', 'c', 'r', 'R':
			// Text or a file to read, up to an unescaped newline.
			for i < n && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case 's':
			if i >= n {
				return true
			}
			d := s[i]
			if d == '\n' || d == '\\' {
				return true
			}
			i++
			for k := 0; k < 2; k++ {
				if i, ok = sedDelimited(s, i, d); !ok {
					return true
				}
			}
			for i < n {
				f := s[i]
				if f == 'e' || f == 'w' || f == 'W' {
					return true
				}
				if f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9' {
					i++
					continue
				}
				break
			}
		case 'y':
			if i >= n {
				return true
			}
			d := s[i]
			i++
			for k := 0; k < 2; k++ {
				if i, ok = sedDelimited(s, i, d); !ok {
					return true
				}
			}
		default: // e, w, W and anything unknown
			return true
		}
	}
	return false
}

// sedAddr skips an optional address at i.
func sedAddr(s string, i int) (int, bool) {
	n := len(s)
	if i >= n {
		return i, true
	}
	switch c := s[i]; {
	case c >= '0' && c <= '9' || c == '+' || c == '~':
		i++
		for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
			i++
		}
	case c == '$':
		i++
	case c == '/' || c == '\\':
		d := byte('/')
		if c == '\\' {
			if i+1 >= n {
				return i, false
			}
			d = s[i+1]
			i++
		}
		var ok bool
		if i, ok = sedDelimited(s, i+1, d); !ok {
			return i, false
		}
		for i < n && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
	}
	return i, true
}

// sedDelimited skips a regular expression or replacement up to and past its
// unescaped delimiter d, treating bracket expressions as opaque.
func sedDelimited(s string, i int, d byte) (int, bool) {
	n := len(s)
	for i < n {
		switch c := s[i]; {
		case c == '\\':
			i += 2
		case c == d:
			return i + 1, true
		case c == '[' && d != '[':
			j := i + 1
			if j < n && s[j] == '^' {
				j++
			}
			if j < n && s[j] == ']' {
				j++
			}
			for j < n && s[j] != ']' {
				j++
			}
			if j >= n {
				return i, false
			}
			i = j + 1
		case c == '\n':
			return i, false
		default:
			i++
		}
	}
	return i, false
}

// sed judges sed: options from the GNU table, then a script that must be
// made only of commands that print, delete and substitute in memory.
func (a *analyzer) sed(fs []field) (string, string) {
	p := programs["sed"]
	opts, operands, why := p.parseArgs("sed", fs[1:])
	if why != "" {
		return "not understood: " + why, ""
	}
	var scripts []field
	for _, o := range opts {
		if h := p.danger[o.name]; h != "" {
			return "", h
		}
		if o.name == "-e" || o.name == "--expression" {
			scripts = append(scripts, o.val)
		}
	}
	if len(scripts) == 0 {
		if len(operands) == 0 {
			return "not understood: sed without a script", ""
		}
		scripts, operands = operands[:1], operands[1:]
	}
	for _, s := range scripts {
		if s.dyn || s.glob {
			return "not understood: a sed script only known at run time", ""
		}
		if w := sedScript(s.s); w != "" {
			return "not understood: sed script: " + w, ""
		}
	}
	for _, f := range operands {
		a.addRead(f, "sed", false)
	}
	return "", ""
}

// sedScript says why a GNU sed script is not understood: only addresses,
// blocks, labels and the commands p P d D n N q Q = l g G h H x z and
// s/// with the flags g p i I m M and a number are. Delimiters are found
// as GNU sed finds them (an unescaped delimiter ends a part; brackets do
// not protect it).
func sedScript(s string) string {
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ';') {
			i++
		}
		if i >= len(s) {
			return ""
		}
		if s[i] == '#' {
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		}
		var ok bool
		if i, ok = sedAddress(s, i); !ok {
			return "an address it does not model"
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i < len(s) && s[i] == ',' {
			i++
			if i < len(s) && (s[i] == '+' || s[i] == '~') {
				i++
				j := i
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
				if i == j {
					return "an address it does not model"
				}
			} else if i, ok = sedAddress(s, i); !ok {
				return "an address it does not model"
			}
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '!') {
			i++
		}
		if i >= len(s) {
			return "a script that ends after an address"
		}
		c := s[i]
		i++
		switch c {
		case '{':
			continue // a block: commands follow at once
		case 'p', 'P', 'd', 'D', 'n', 'N', '=', 'g', 'G', 'h', 'H', 'x', 'z', '}':
		case 'q', 'Q', 'l', 'L':
			for i < len(s) && (s[i] == ' ' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
		case ':', 'b', 't', 'T':
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			j := i
			for i < len(s) && isAwkIdentByte(s[i]) {
				i++
			}
			if c == ':' && i == j {
				return "an empty label"
			}
		case 's':
			if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
				return "an s command with an unusual delimiter"
			}
			d := s[i]
			var ok bool
			if i, ok = sedPart(s, i+1, d); !ok {
				return "an unterminated s command"
			}
			if i, ok = sedPart(s, i, d); !ok {
				return "an unterminated s command"
			}
			for i < len(s) && strings.IndexByte("gpiImM0123456789", s[i]) >= 0 {
				i++
			}
		case 'y':
			if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
				return "a y command with an unusual delimiter"
			}
			d := s[i]
			var ok bool
			if i, ok = sedPart(s, i+1, d); !ok {
				return "an unterminated y command"
			}
			if i, ok = sedPart(s, i, d); !ok {
				return "an unterminated y command"
			}
		default:
			return "the command " + string(c) + " (it may read or write files, run commands, or is not modelled)"
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' && s[i] != '#' {
			return "text after a command"
		}
	}
	return ""
}

// sedAddress skips an optional address at s[i].
func sedAddress(s string, i int) (int, bool) {
	if i >= len(s) {
		return i, true
	}
	switch c := s[i]; {
	case c >= '0' && c <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i < len(s) && s[i] == '~' {
			i++
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		}
	case c == '$':
		i++
	case c == '/' || c == '\\':
		d := byte('/')
		if c == '\\' {
			if i+1 >= len(s) || s[i+1] == '\n' || s[i+1] == '\\' {
				return i, false
			}
			d = s[i+1]
			i++
		}
		var ok bool
		if i, ok = sedPart(s, i+1, d); !ok {
			return i, false
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
	}
	return i, true
}

// sedPart returns the index after the unescaped delimiter d that ends the
// part starting at s[i]; a newline in a part is not modelled.
func sedPart(s string, i int, d byte) (int, bool) {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\n':
			return i, false
		case d:
			return i + 1, true
		}
	}
	return i, false
}

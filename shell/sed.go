package shell

// sed (and gsed): a positive parser of GNU sed scripts.

import (
	"strings"
)

// sed judges sed: options from the GNU table, then a script that must be
// made only of commands that print, delete and substitute in memory.
func (a *analyzer) sed(fs []field) (string, string) {
	p := programs()["sed"]
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
// s/// with the flags g p i I m M and a number are. Where a regex holds a
// bracket expression with the delimiter in it (`s/[/]/x/`), GNU sed's
// versions disagree on where the regex ends: such a script is not
// understood.
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
		case 's', 'y':
			var why string
			if i, why = sedTwoParts(s, i, c); why != "" {
				return why
			}
			for c == 's' && i < len(s) && strings.IndexByte("gpiImM0123456789", s[i]) >= 0 {
				i++
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

// sedTwoParts skips the two delimited parts of an s or y command starting
// at s[i] (the delimiter).
func sedTwoParts(s string, i int, cmd byte) (int, string) {
	if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
		return i, "an " + string(cmd) + " command with an unusual delimiter"
	}
	d := s[i]
	var ok bool
	if cmd == 's' {
		if i, ok = sedRegex(s, i+1, d); !ok {
			return i, "an s command whose regex it cannot delimit"
		}
	} else if i, ok = sedPart(s, i+1, d); !ok {
		return i, "an unterminated " + string(cmd) + " command"
	}
	if i, ok = sedPart(s, i, d); !ok {
		return i, "an unterminated " + string(cmd) + " command"
	}
	return i, ""
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
		if i, ok = sedRegex(s, i+1, d); !ok {
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

// sedRegex is sedPart for a regex: it fails when a bracket expression in
// it runs past the first delimiter (holds it), since whether the
// delimiter then ends the regex depends on the sed.
func sedRegex(s string, i int, d byte) (int, bool) {
	end, ok := sedPart(s, i, d)
	if !ok {
		return end, false
	}
	for j := i; j < end-1; j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			k, ok := sedBracketEnd(s, j)
			if !ok || k > end-1 {
				return end, false
			}
			j = k - 1
		}
	}
	return end, true
}

// sedBracketEnd returns the index after the POSIX bracket expression that
// starts at s[i] ('['): an optional '^', a leading ']' taken literally,
// and [:class:], [.coll.] and [=equiv=] inside; a backslash is literal.
func sedBracketEnd(s string, i int) (int, bool) {
	j := i + 1
	if j < len(s) && s[j] == '^' {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++
	}
	for j < len(s) {
		switch {
		case s[j] == ']':
			return j + 1, true
		case s[j] == '[' && j+1 < len(s) && strings.IndexByte(":.=", s[j+1]) >= 0:
			k := strings.Index(s[j+2:], string(s[j+1])+"]")
			if k < 0 {
				return len(s), false
			}
			j += 2 + k + 2
		default:
			j++
		}
	}
	return len(s), false
}

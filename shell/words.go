package shell

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxBraceFields caps brace expansion of one word; a larger expansion is
// reported as a single dynamic field rather than allocated.
const maxBraceFields = 256

// field is one word of a command after literal resolution.
type field struct {
	s        string // the resolved text, Dyn for run-time parts
	dyn      bool   // s contains Dyn
	glob     bool   // the word had an unquoted glob (*, ?, [...], extglob)
	expanded bool   // the word had a parameter, command, arithmetic or process substitution, or ~user
	extglob  bool   // the word had an extended glob, which zsh would read as a glob qualifier that can run code
}

// resolver turns words into fields. It keeps a scratch buffer to spare
// allocations; it is not safe for concurrent use.
type resolver struct {
	home string
	buf  []byte
}

// words appends the fields of ws to out, brace expansion included.
func (r *resolver) words(ws []*syntax.Word, out []field) []field {
	for _, w := range ws {
		out = r.word(w, out)
	}
	return out
}

// word appends the fields of w to out: one, or several after brace expansion.
func (r *resolver) word(w *syntax.Word, out []field) []field {
	if !hasBrace(w) {
		return append(out, r.single(w))
	}
	return r.braces(w, out)
}

// braces appends the fields of a word with brace candidates. It is apart
// from word because its range-over-func loop makes its locals escape.
func (r *resolver) braces(w *syntax.Word, out []field) []field {
	// SplitBraces rewrites the word it is given, and syntax.Walk cannot walk
	// the BraceExp nodes it creates: work on a copy.
	cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
	if !syntax.SplitBraces(cp) {
		return append(out, r.single(w))
	}
	n := 0
	for bw, err := range expand.BracesSeq(nil, cp) {
		if err != nil || n >= maxBraceFields {
			return append(out, field{s: Dyn, dyn: true, expanded: true})
		}
		out = append(out, r.single(bw))
		n++
	}
	return out
}

func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// single resolves a word without brace expansion.
func (r *resolver) single(w *syntax.Word) field {
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if plainLit(p.Value) {
				return field{s: p.Value}
			}
		case *syntax.SglQuoted:
			if !p.Dollar {
				return field{s: p.Value}
			}
		case *syntax.DblQuoted:
			if len(p.Parts) == 1 {
				if l, ok := p.Parts[0].(*syntax.Lit); ok && strings.IndexByte(l.Value, '\\') < 0 {
					return field{s: l.Value}
				}
			}
		}
	}
	var f field
	b := r.buf[:0]
	for i, p := range w.Parts {
		b = r.part(b, p, i == 0, &f)
	}
	f.s = string(b)
	f.dyn = strings.Contains(f.s, Dyn)
	r.buf = b
	return f
}

// plainLit reports whether an unquoted literal means exactly its text.
func plainLit(s string) bool {
	if s == "" || s[0] == '~' {
		return false
	}
	return strings.IndexAny(s, "\\*?[\x00") < 0
}

func appendDyn(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == 0 {
		return b // one Dyn stands for any run of run-time parts
	}
	return append(b, Dyn...)
}

func (r *resolver) part(b []byte, p syntax.WordPart, first bool, f *field) []byte {
	switch p := p.(type) {
	case *syntax.Lit:
		return r.unquotedLit(b, p.Value, first, f)
	case *syntax.SglQuoted:
		if p.Dollar {
			return appendANSIC(b, p.Value)
		}
		return append(b, p.Value...)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			switch q := q.(type) {
			case *syntax.Lit:
				b = appendDblQuotedLit(b, q.Value)
			case *syntax.ParamExp:
				b = r.param(b, q, f)
			default:
				f.expanded = true
				b = appendDyn(b)
			}
		}
		return b
	case *syntax.ParamExp:
		return r.param(b, p, f)
	case *syntax.ExtGlob:
		f.glob, f.extglob = true, true
		return appendDyn(b)
	default: // CmdSubst, ArithmExp, ProcSubst, BraceExp left unexpanded
		f.expanded = true
		return appendDyn(b)
	}
}

// param resolves $HOME and ${HOME} when the home directory is known; every
// other parameter is only known at run time.
func (r *resolver) param(b []byte, p *syntax.ParamExp, f *field) []byte {
	if r.home != "" && p.Param != nil && p.Param.Value == "HOME" && p.Index == nil &&
		p.Exp == nil && p.Repl == nil && p.Slice == nil && !p.Excl && !p.Length && p.Names == 0 {
		return append(b, r.home...)
	}
	f.expanded = true
	return appendDyn(b)
}

// unquotedLit resolves an unquoted literal: backslash escapes, tilde prefix
// (first part only), and glob characters, which become Dyn.
func (r *resolver) unquotedLit(b []byte, v string, first bool, f *field) []byte {
	i := 0
	if first && strings.HasPrefix(v, "~") {
		end := strings.IndexByte(v, '/')
		if end < 0 {
			end = len(v)
		}
		switch user := v[1:end]; {
		case user == "" && r.home != "":
			b = append(b, r.home...)
			i = end
		case user == "":
			// Home unknown: keep the ~ so the path is still flagged as outside.
		default: // ~user, ~+, ~-
			f.expanded = true
			b = appendDyn(b)
			i = end
		}
	}
	for ; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			if i+1 < len(v) {
				i++
				b = append(b, v[i])
			} else {
				b = append(b, '\\')
			}
		case '*', '?':
			f.glob = true
			b = appendDyn(b)
		case '[':
			if first && v == "[" {
				return append(b, '[') // the test command
			}
			f.glob = true
			b = appendDyn(b)
			if j := strings.IndexByte(v[i+1:], ']'); j >= 0 {
				i += j + 1
			}
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendDblQuotedLit resolves the escapes that are special inside double
// quotes; any other backslash stays.
func appendDblQuotedLit(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				i++
				b = append(b, v[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b = append(b, c)
	}
	return b
}

// appendANSIC decodes a $'...' string. Decoded control characters other than
// newline and tab become Dyn, so a decoded NUL can never forge Dyn and a
// decoded \r can never hide text.
func appendANSIC(b []byte, v string) []byte {
	put := func(r rune) {
		switch {
		case r == '\n' || r == '\t':
			b = append(b, byte(r))
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			b = appendDyn(b)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				b = appendDyn(b)
			} else {
				b = append(b, c)
			}
			continue
		}
		i++
		switch e := v[i]; e {
		case 'a':
			put(7)
		case 'b':
			put(8)
		case 'e', 'E':
			put(0x1b)
		case 'f':
			put(0xc)
		case 'n':
			put('\n')
		case 'r':
			put('\r')
		case 't':
			put('\t')
		case 'v':
			put(0xb)
		case '\\', '\'', '"', '?':
			b = append(b, e)
		case 'c':
			if i+1 < len(v) {
				i++
				put(rune(v[i] & 0x1f))
			} else {
				b = append(b, '\\', 'c')
			}
		case 'x', 'u', 'U':
			max := 2
			if e == 'u' {
				max = 4
			} else if e == 'U' {
				max = 8
			}
			j := i + 1
			for j < len(v) && j-i-1 < max && isHex(v[j]) {
				j++
			}
			if j == i+1 {
				b = append(b, '\\', e)
				continue
			}
			n, _ := strconv.ParseUint(v[i+1:j], 16, 32)
			i = j - 1
			if e == 'x' {
				if n >= 0x80 {
					b = appendDyn(b) // a raw byte: not text we can show
				} else {
					put(rune(n))
				}
			} else if n > utf8.MaxRune {
				b = appendDyn(b)
			} else {
				put(rune(n))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(v) && j-i < 3 && v[j] >= '0' && v[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(v[i:j], 8, 32)
			i = j - 1
			if n >= 0x80 {
				b = appendDyn(b)
			} else {
				put(rune(n))
			}
		default:
			b = append(b, '\\', e)
		}
	}
	return b
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// bareByte reports whether c may appear in a word left unquoted in Text.
func bareByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	// Braces are bare too: Text is only matched, never run, and a literal
	// brace in a rule is written \{ (glob.QuoteMeta), as in corpus O18.
	return strings.IndexByte("_@%+=:,./{}-\x00", c) >= 0
}

// Quote renders one resolved word the way Text does: bare when it is made only
// of [A-Za-z0-9_@%+=:,./{}-] and Dyn, else single-quoted with ' written as '\”;
// the empty word is ”.
func Quote(word string) string {
	if word != "" && isBare(word) {
		return word
	}
	return string(appendQuoted(nil, word))
}

func isBare(s string) bool {
	for i := 0; i < len(s); i++ {
		if !bareByte(s[i]) {
			return false
		}
	}
	return true
}

func appendQuoted(b []byte, s string) []byte {
	if s != "" && isBare(s) {
		return append(b, s...)
	}
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, `'\''`...)
		} else {
			b = append(b, s[i])
		}
	}
	return append(b, '\'')
}

// joinQuoted renders argv as Text.
func joinQuoted(argv []string) string {
	n := 0
	for _, a := range argv {
		n += len(a) + 3
	}
	b := make([]byte, 0, n)
	for i, a := range argv {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendQuoted(b, a)
	}
	return string(b)
}

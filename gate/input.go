package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// scanInput reads a tool input in one pass with exact, case-sensitive keys.
// It refuses what two readers could understand differently: anything but
// one JSON object; two keys of one object (at any depth) that are equal or
// differ only in case, since JSON parsers keep the first, the last, or
// match case-insensitively; and, with fields, a top-level key that is a
// case variant of a field the gate reads (`FILE_PATH`, `Command`), which
// the gate would ignore and a case-insensitive agent would use. An empty
// input is the empty object.
//
// encoding/json checks the syntax (json.Valid, which also bounds nesting);
// the walk itself allocates only for keys with escapes and objects with
// many keys, since it runs on every call.
func scanInput(raw []byte, fields bool) (toolInput, error) {
	var in toolInput
	raw = bytes.Trim(raw, jsonSpace)
	if len(raw) == 0 {
		return in, nil
	}
	if !json.Valid(raw) {
		var v json.RawMessage
		err := json.Unmarshal(raw, &v) // only for the error's offset
		return in, fmt.Errorf("input is not valid JSON: %s", jsonErrText(err))
	}
	if raw[0] != '{' {
		return in, errors.New("input must be a JSON object")
	}
	s := inputScanner{b: raw}
	if err := s.object(&in, fields); err != nil {
		return in, err
	}
	return in, nil
}

// jsonSpace is JSON's whitespace (not Unicode's: `\f` is not JSON).
const jsonSpace = " \t\r\n"

// inputScanner walks JSON that json.Valid accepted.
type inputScanner struct {
	b []byte
	i int
}

func (s *inputScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// smallObject is how many keys an object may have before its keys are
// compared through a map instead of pairwise.
const smallObject = 16

// object reads the object at s.i. With top set (in != nil) it fills in's
// known fields with their raw values.
func (s *inputScanner) object(top *toolInput, fields bool) error {
	s.i++ // past '{'

	var keys [][]byte            // keys as decoded, while few
	var folded map[string][]byte // folded key -> key, once many
	for {
		s.space()
		if s.b[s.i] == '}' {
			s.i++
			return nil
		}
		if s.b[s.i] == ',' {
			s.i++
			s.space()
		}
		k, err := s.key()
		if err != nil {
			return err
		}
		if folded == nil && len(keys) < smallObject {
			for _, p := range keys {
				if bytes.EqualFold(p, k) {
					return keyClash(p, k)
				}
			}
			keys = append(keys, k)
		} else {
			if folded == nil {
				folded = make(map[string][]byte, 2*smallObject)
				for _, p := range keys {
					folded[foldKey(string(p))] = p
				}
			}
			fk := foldKey(string(k))
			if p, dup := folded[fk]; dup {
				return keyClash(p, k)
			}
			folded[fk] = k
		}
		s.space()
		s.i++ // :
		s.space()
		start := s.i
		if err := s.value(fields); err != nil {
			return err
		}
		if top == nil {
			continue
		}
		if f := top.field(k); f != nil {
			*f = json.RawMessage(s.b[start:s.i])
		} else if fields {
			if name := variantOf(k); name != "" {
				return fmt.Errorf("input key %q is a case variant of %q (keys are case-sensitive)", clipKey(string(k)), name)
			}
		}
	}
}

// key reads an object key and returns it decoded.
func (s *inputScanner) key() ([]byte, error) {
	start := s.i
	s.skipString()
	k := s.b[start+1 : s.i-1]
	if bytes.IndexByte(k, '\\') < 0 {
		return k, nil
	}
	var dec string
	if err := json.Unmarshal(s.b[start:s.i], &dec); err != nil {
		return nil, fmt.Errorf("input has a bad key: %s", jsonErrText(err))
	}
	return []byte(dec), nil
}

// value skips the value at s.i, checking the keys of nested objects.
func (s *inputScanner) value(fields bool) error {
	switch s.b[s.i] {
	case '{':
		return s.object(nil, fields)
	case '[':
		s.i++
		for {
			s.space()
			switch s.b[s.i] {
			case ']':
				s.i++
				return nil
			case ',':
				s.i++
				s.space()
			}
			if err := s.value(fields); err != nil {
				return err
			}
		}
	case '"':
		s.skipString()
	default: // number, true, false, null
		for s.i < len(s.b) && !endOfLiteral(s.b[s.i]) {
			s.i++
		}
	}
	return nil
}

func endOfLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// skipString moves past the string starting at s.i.
func (s *inputScanner) skipString() {
	s.i++ // opening quote
	for s.b[s.i] != '"' {
		if s.b[s.i] == '\\' {
			s.i++
		}
		s.i++
	}
	s.i++
}

func keyClash(prev, k []byte) error {
	if bytes.Equal(prev, k) {
		return fmt.Errorf("input has the key %q twice", clipKey(string(k)))
	}
	return fmt.Errorf("input has the keys %q and %q, which differ only in case", clipKey(string(prev)), clipKey(string(k)))
}

// variantOf returns the known field k is a case variant of, or "".
func variantOf(k []byte) string {
	for _, name := range knownFields {
		if string(k) != name && bytes.EqualFold(k, []byte(name)) {
			return name
		}
	}
	return ""
}

// foldKey maps a key to one representative of its case-folding class, so
// keys that strings.EqualFold calls equal fold to the same string.
func foldKey(k string) string {
	ascii := true
	for i := 0; i < len(k); i++ {
		if k[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		// For ASCII the smallest rune of each orbit is the upper-case letter
		// (s, S and U+017F fold to S).
		return strings.ToUpper(k)
	}
	var b strings.Builder
	b.Grow(len(k))
	for _, r := range k {
		// The smallest rune of r's simple-folding orbit stands for all of it.
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

// maxKeyShown bounds a key quoted in an error.
const maxKeyShown = 64

func clipKey(k string) string {
	if len(k) <= maxKeyShown {
		return k
	}
	return strings.ToValidUTF8(k[:maxKeyShown], "") + "..."
}

// jsonErrText keeps a decoder error short and free of the input's content.
func jsonErrText(err error) string {
	var se *json.SyntaxError
	switch {
	case err == nil:
		return "invalid"
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	return err.Error()
}

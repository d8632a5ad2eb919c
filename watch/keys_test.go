package watch

import (
	"testing"
)

func TestParseKeys(t *testing.T) {
	unknown := Key{Kind: KeyUnknown}
	for _, tt := range []struct {
		name string
		in   string
		want []Key
		rest string
	}{
		{"letters and digits", "a1s", []Key{Rune('a'), Rune('1'), Rune('s')}, ""},
		{"enter as CR and LF", "\r\n", []Key{Enter, Enter}, ""},
		{"backspace as DEL and BS", "\x7f\x08", []Key{Backspace, Backspace}, ""},
		{"tab and ctrl+c", "\t\x03", []Key{Tab, CtrlC}, ""},
		{"arrows CSI", "\x1b[A\x1b[B\x1b[C\x1b[D", []Key{Up, Down, Right, Left}, ""},
		{"arrows SS3", "\x1bOA\x1bOB\x1bOC\x1bOD", []Key{Up, Down, Right, Left}, ""},
		{"arrows with modifiers", "\x1b[1;5A", []Key{Up}, ""},
		{"page keys and delete", "\x1b[5~\x1b[6~\x1b[3~", []Key{PgUp, PgDn, Backspace}, ""},
		{"shift+tab is back", "\x1b[Z", []Key{Left}, ""},
		{"lone esc", "\x1b", []Key{Esc}, ""},
		{"double esc", "\x1b\x1b", []Key{Esc, Esc}, ""},
		{"alt+x is esc then x", "\x1bx", []Key{Esc, Rune('x')}, ""},
		{"unknown CSI", "\x1b[99x", []Key{unknown}, ""},
		{"broken CSI does not eat the next key", "\x1b[1\x031", []Key{unknown, CtrlC, Rune('1')}, ""},
		{"incomplete CSI waits", "1\x1b[", []Key{Rune('1')}, "\x1b["},
		{"incomplete SS3 waits", "\x1bO", nil, "\x1bO"},
		{"utf-8", "é日🚀", []Key{Rune('é'), Rune('日'), Rune('🚀')}, ""},
		{"incomplete utf-8 waits", "a\xe6\x97", []Key{Rune('a')}, "\xe6\x97"},
		{"invalid utf-8", "\xff1", []Key{unknown, Rune('1')}, ""},
		{"other controls", "\x01\x1f", []Key{unknown, unknown}, ""},
		{"bidi control is not printable", "\u202e", []Key{unknown}, ""},
		{"bracketed paste markers are unknown", "\x1b[200~hi\x1b[201~", []Key{unknown, Rune('h'), Rune('i'), unknown}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, rest := ParseKeys([]byte(tt.in))
			if len(got) != len(tt.want) {
				t.Fatalf("keys %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("keys %v, want %v", got, tt.want)
				}
			}
			if string(rest) != tt.rest {
				t.Fatalf("rest %q, want %q", rest, tt.rest)
			}
		})
	}
}

// TestParseKeysSplit checks a sequence split across reads decodes the same.
func TestParseKeysSplit(t *testing.T) {
	in := []byte("ab\x1b[A日\x1b[5~\r")
	whole, _ := ParseKeys(in)
	for cut := 0; cut <= len(in); cut++ {
		if cut > 0 && in[cut-1] == 0x1b {
			// A lone ESC at the end of a read is the Esc key; terminals
			// write a sequence at once, so they never split it there.
			continue
		}
		first, rest := ParseKeys(in[:cut])
		second, rest := ParseKeys(append(rest, in[cut:]...))
		got := append(first, second...)
		if len(rest) != 0 || len(got) != len(whole) {
			t.Fatalf("cut %d: %v rest %q, want %v", cut, got, rest, whole)
		}
		for i := range got {
			if got[i] != whole[i] {
				t.Fatalf("cut %d: %v, want %v", cut, got, whole)
			}
		}
	}
}

// FuzzParseKeys: terminal input is untrusted (a paste can hold anything).
// Parsing never panics, always makes progress, and the rest it keeps back
// is a short suffix of the input.
func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{"", "a", "\x1b", "\x1b[", "\x1b[1;5A", "\x1bO", "\xe6\x97", "\x1b[200~x", "\r\n\x7f\x03"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, rest := ParseKeys(b)
		if len(rest) > maxEscape || len(rest) > len(b) {
			t.Fatalf("rest %q of %q", rest, b)
		}
		if string(b[len(b)-len(rest):]) != string(rest) {
			t.Fatalf("rest %q is not a suffix of %q", rest, b)
		}
		if len(b) > len(rest) && len(keys) == 0 {
			t.Fatalf("no key from %q", b)
		}
		for _, k := range keys {
			if k.Kind == KeyRune && (k.Rune < 0x20 || k.Rune == 0x7f) {
				t.Fatalf("control %U as a rune key from %q", k.Rune, b)
			}
		}
	})
}

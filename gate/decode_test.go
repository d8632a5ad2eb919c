package gate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeInputExact(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		fields  bool   // refuse case variants of known fields
		wantErr string // "" accepts
		want    string // the file_path field's raw value when accepted
	}{
		{"plain", `{"file_path":"a.txt"}`, true, "", `"a.txt"`},
		{"empty", ``, true, "", ``},
		{"empty object", `{}`, true, "", ``},
		{"spaces kept out", `{ "file_path" :  "a.txt" , "x":1}`, true, "", `"a.txt"`},
		{"nested value", `{"file_path":{"a":[1,{"b":2}]},"y":true}`, true, "", `{"a":[1,{"b":2}]}`},
		{"duplicate", `{"file_path":"~/.claude/settings.json","file_path":"notes.txt"}`, true, "twice", ""},
		{"case variant pair", `{"file_path":"~/.claude/settings.json","FILE_PATH":"notes.txt"}`, true, "differ only in case", ""},
		{"case variant pair, other tool", `{"command":"ls","Command":"rm -rf ~"}`, false, "differ only in case", ""},
		{"lone case variant", `{"FILE_PATH":"~/.claude/settings.json"}`, true, "case variant", ""},
		{"lone case variant, name tool", `{"FILE_PATH":"x"}`, false, "", ``},
		{"kelvin sign folds with k", `{"k":1,"\u212a":2}`, false, "differ only in case", ""},
		{"long s folds with s", `{"s":1,"\u017f":2}`, false, "differ only in case", ""},
		{"nested duplicate", `{"edits":[{"old_string":"a","old_string":"b"}]}`, true, "twice", ""},
		{"nested case variant", `{"edits":[{"new_string":"a","New_String":"b"}]}`, true, "differ only in case", ""},
		{"same key in sibling objects", `{"a":{"x":1},"b":{"x":2}}`, true, "", ``},
		{"escaped key is the same key", `{"file_path":"a","file\u005fpath":"b"}`, true, "twice", ""},
		{"array", `[1]`, true, "JSON object", ""},
		{"string", `"x"`, true, "JSON object", ""},
		{"truncated", `{"file_path":`, true, "not valid JSON", ""},
		{"trailing", `{"a":1} {"b":2}`, true, "not valid JSON", ""},
		{"bad key", `{1:2}`, true, "not valid JSON", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := scanInput([]byte(tt.input), tt.fields)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if string(in.FilePath) != tt.want {
				t.Errorf("file_path = %s, want %s", in.FilePath, tt.want)
			}
		})
	}
}

// TestDecodeInputManyKeys: objects past smallObject keys are checked
// through a map, with the same answers.
func TestDecodeInputManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"file_path":"a"`)
	for i := range 40 {
		b.WriteString(`,"k` + strings.Repeat("x", i) + `":1`)
	}
	ok := b.String() + "}"
	if _, err := scanInput([]byte(ok), true); err != nil {
		t.Fatalf("40 distinct keys refused: %v", err)
	}
	for _, tail := range []string{`,"FILE_PATH":"b"}`, `,"kxxx":2}`, `,"KXXX":2}`, `,"nested":{"a":1,"A":2}}`} {
		if _, err := scanInput([]byte(b.String()+tail), true); err == nil {
			t.Errorf("accepted a clash in %s", tail)
		}
	}
}

// TestInputPathsAll: every path field is judged, not the first one only.
func TestInputPathsAll(t *testing.T) {
	in, ok := decodeInput([]byte(`{"notebook_path":"a.ipynb","file_path":"~/.claude/settings.json"}`))
	if !ok {
		t.Fatal("decode")
	}
	got, ok := inputPaths(in)
	if !ok || strings.Join(got, ",") != "~/.claude/settings.json,a.ipynb" {
		t.Errorf("inputPaths = %q, %v", got, ok)
	}
}

// FuzzDecodeInput checks scanInput against an independent reading: what it
// accepts is one JSON object with no two keys of an object equal under
// case folding, and every field it reads holds exactly what a
// case-sensitive decoder finds under that key. What it refuses is invalid
// JSON, not an object, or has such keys.
func FuzzDecodeInput(f *testing.F) {
	for _, s := range []string{
		`{"command":"ls"}`, `{"command":["bash","-lc","ls"],"workdir":"/x"}`,
		`{"file_path":"a","FILE_PATH":"b"}`, `{"file_path":"a","file_path":"b"}`,
		`{"edits":[{"old_string":"a","new_string":"b"}]}`, `{"a":{"b":{"B":1}}}`,
		`{"k":1,"K":2}`, `{"Command":"x"}`, `[]`, `{"x":[{"y":null}]}`, ``, `{"cmd":"a\u0000b"}`,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, raw []byte, fields bool) {
		in, err := scanInput(raw, fields)
		if len(bytes.Trim(raw, " \t\r\n")) == 0 {
			if err != nil {
				t.Fatalf("empty input refused: %v", err)
			}
			return
		}
		var obj map[string]json.RawMessage
		objErr := json.Unmarshal(raw, &obj)
		if objErr != nil || obj == nil {
			if err == nil {
				t.Fatalf("accepted %q, which is not a JSON object (%v)", raw, objErr)
			}
			return
		}
		ambiguous := foldCollision(raw) || (fields && hasVariant(obj))
		if err != nil {
			if !ambiguous {
				t.Fatalf("refused the unambiguous object %q: %v", raw, err)
			}
			return
		}
		if ambiguous {
			t.Fatalf("accepted the ambiguous object %q", raw)
		}
		// No key appears twice, so the map's reading is the only one.
		for _, name := range knownFields {
			got := *in.field([]byte(name))
			want := obj[name]
			if !bytes.Equal(compact(t, got), compact(t, want)) {
				t.Fatalf("field %s = %s, a case-sensitive decoder reads %s (input %q)", name, got, want, raw)
			}
		}
	})
}

func compact(t *testing.T, raw []byte) []byte {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("field value %q is not JSON: %v", raw, err)
	}
	return b.Bytes()
}

func hasVariant(obj map[string]json.RawMessage) bool {
	for k := range obj {
		if variantOf([]byte(k)) != "" {
			return true
		}
	}
	return false
}

// foldCollision reports whether any object in raw (valid JSON) has two keys
// that are equal under strings.EqualFold, by a walk of its own: decode
// every object as an ordered key list via json.Decoder.
func foldCollision(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			var keys []string
			for dec.More() {
				k, _ := dec.Token()
				ks, _ := k.(string)
				for _, p := range keys {
					if strings.EqualFold(p, ks) && utf8.ValidString(ks) {
						return true
					}
				}
				keys = append(keys, ks)
				if walk() {
					return true
				}
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			_, _ = dec.Token()
		}
		return false
	}
	return walk()
}

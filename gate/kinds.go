package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Valid reports whether k is a known tool kind.
func (k ToolKind) Valid() bool {
	return k == KindShell || k == KindRead || k == KindWrite || k == KindName
}

// defaultToolKinds are the tool names of the agents approvalbot knows:
// Claude Code (Bash, Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep,
// LS), Codex (shell, local_shell, exec_command, shell_command, apply_patch),
// opencode (bash, read, write, edit, multiedit, patch, glob, grep, list),
// Gemini CLI (run_shell_command, read_file, write_file, replace,
// list_directory, search_file_content, glob), and common generic names.
// A rules file's "kinds" adds to or overrides this table.
var defaultToolKinds = map[string]ToolKind{
	// shell
	"Bash": KindShell, "bash": KindShell, "shell": KindShell, "Shell": KindShell,
	"shell_exec": KindShell, "shell_command": KindShell, "run_shell_command": KindShell,
	"exec_command": KindShell, "local_shell": KindShell, "container.exec": KindShell,
	"run_terminal_cmd": KindShell, "execute_command": KindShell,
	// read
	"Read": KindRead, "read": KindRead, "read_file": KindRead, "NotebookRead": KindRead,
	"view": KindRead,
	"Glob": KindRead, "Grep": KindRead, "LS": KindRead,
	"glob": KindRead, "grep": KindRead, "list": KindRead, "ls": KindRead,
	"list_directory": KindRead, "search_file_content": KindRead,
	// write
	"Write": KindWrite, "Edit": KindWrite, "MultiEdit": KindWrite, "NotebookEdit": KindWrite,
	"write_file": KindWrite, "edit_file": KindWrite, "write": KindWrite, "edit": KindWrite,
	"multiedit": KindWrite, "replace": KindWrite, "patch": KindWrite, "apply_patch": KindWrite,
	"str_replace_editor": KindWrite, "str_replace_based_edit_tool": KindWrite,
}

// searchTools are read tools whose path is optional and defaults to the
// call's cwd (Claude Code's Glob/Grep/LS, opencode's glob/grep/list, ...).
var searchTools = map[string]bool{
	"Glob": true, "Grep": true, "LS": true, "glob": true, "grep": true, "list": true,
	"ls": true, "list_directory": true, "search_file_content": true,
}

// DefaultToolKinds returns a copy of the built-in tool name -> kind table.
func DefaultToolKinds() map[string]ToolKind {
	out := make(map[string]ToolKind, len(defaultToolKinds))
	for k, v := range defaultToolKinds {
		out[k] = v
	}
	return out
}

// WriteTool is the tool name whose rules judge a shell redirection's write
// (`echo x > f` is judged as a Write of f).
const WriteTool = "Write"

// Kind returns the kind of tool: the rules file's "kinds" first, then the
// built-in table, else name-only.
func (p *Policy) Kind(tool string) ToolKind {
	if k, ok := p.kinds[tool]; ok {
		return k
	}
	if k, ok := defaultToolKinds[tool]; ok {
		return k
	}
	return KindName
}

// toolInput holds the input fields the gate understands, raw: which of
// them matter depends on the tool's kind, and a field that matters but has
// an unexpected type makes the call ask. It is filled by scanInput, with
// exact (case-sensitive) keys, never by encoding/json's struct decoding,
// which also matches `FILE_PATH` or `Command`.
type toolInput struct {
	Command      json.RawMessage // command
	Cmd          json.RawMessage // cmd
	Workdir      json.RawMessage // workdir
	FilePath     json.RawMessage // file_path
	Path         json.RawMessage // path
	NotebookPath json.RawMessage // notebook_path
	FilePathJS   json.RawMessage // filePath
	AbsolutePath json.RawMessage // absolute_path
	Input        json.RawMessage // input
	Patch        json.RawMessage // patch
	PatchText    json.RawMessage // patchText
	// Shown to the person, not judged: the text of an edit or a write.
	OldString json.RawMessage // old_string
	NewString json.RawMessage // new_string
	Content   json.RawMessage // content
	NewSource json.RawMessage // new_source
	Edits     json.RawMessage // edits
}

// field returns where the value of the known top-level key name goes, or
// nil for a key the gate does not read.
func (in *toolInput) field(name string) *json.RawMessage {
	switch name {
	case "command":
		return &in.Command
	case "cmd":
		return &in.Cmd
	case "workdir":
		return &in.Workdir
	case "file_path":
		return &in.FilePath
	case "path":
		return &in.Path
	case "notebook_path":
		return &in.NotebookPath
	case "filePath":
		return &in.FilePathJS
	case "absolute_path":
		return &in.AbsolutePath
	case "input":
		return &in.Input
	case "patch":
		return &in.Patch
	case "patchText":
		return &in.PatchText
	case "old_string":
		return &in.OldString
	case "new_string":
		return &in.NewString
	case "content":
		return &in.Content
	case "new_source":
		return &in.NewSource
	case "edits":
		return &in.Edits
	}
	return nil
}

// knownFields are the keys toolInput reads, for the case-variant check.
var knownFields = []string{"command", "cmd", "workdir", "file_path", "path", "notebook_path", "filePath",
	"absolute_path", "input", "patch", "patchText", "old_string", "new_string", "content", "new_source", "edits"}

// decodeInput parses a tool input object with exact keys (see scanInput).
// An empty input is the empty object; anything else scanInput refuses is
// unusable.
func decodeInput(raw json.RawMessage) (toolInput, bool) {
	in, err := scanInput(raw, true)
	return in, err == nil
}

// inputFrame is an open object or array while scanInput walks an input.
type inputFrame struct {
	object bool
	keys   map[string]string // an object's keys so far: folded -> as written
	key    bool              // an object expects a key (or its end) next
}

// scanInput reads a tool input in one pass with exact, case-sensitive keys.
// It refuses what two readers could understand differently: anything but
// one JSON object; two keys of one object (at any depth) that are equal or
// differ only in case, since JSON parsers keep the first, the last, or
// match case-insensitively; and, with fields, a top-level key that is a
// case variant of a field the gate reads (`FILE_PATH`, `Command`), which
// the gate would ignore and a case-insensitive agent would use. An empty
// input is the empty object.
func scanInput(raw []byte, fields bool) (toolInput, error) {
	var in toolInput
	if len(bytes.TrimSpace(raw)) == 0 {
		return in, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers stay text; nothing is converted
	tok, err := dec.Token()
	if err != nil {
		return in, fmt.Errorf("input is not valid JSON: %s", jsonErrText(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return in, errors.New("input must be a JSON object")
	}
	stack := []inputFrame{{object: true, key: true}}
	var top *json.RawMessage // where the current top-level value goes, if the gate reads it
	var topStart int64       // offset just after the current top-level key
	// valueEnded is called after a scalar or a closing delimiter: if that
	// completed a top-level value, a known field gets its raw text.
	valueEnded := func() {
		if len(stack) == 1 && top != nil {
			v := raw[topStart:dec.InputOffset()]
			*top = json.RawMessage(bytes.TrimLeft(v, " \t\r\n:"))
			top = nil
		}
	}
	for len(stack) > 0 {
		tok, err := dec.Token()
		if err != nil {
			return in, fmt.Errorf("input is not valid JSON: %s", jsonErrText(err))
		}
		f := &stack[len(stack)-1]
		if f.object && f.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				valueEnded()
				continue
			}
			k, _ := tok.(string) // the decoder only returns a string here
			if err := f.addKey(k); err != nil {
				return in, err
			}
			f.key = false
			if len(stack) == 1 {
				top = in.field(k)
				if top == nil && fields {
					if name := variantOf(k); name != "" {
						return in, fmt.Errorf("input key %q is a case variant of %q (keys are case-sensitive)", clipKey(k), name)
					}
				}
				topStart = dec.InputOffset()
			}
			continue
		}
		if f.object {
			f.key = true // tok is or opens this key's value
		}
		switch d, _ := tok.(json.Delim); d {
		case '{':
			stack = append(stack, inputFrame{object: true, key: true})
		case '[':
			stack = append(stack, inputFrame{})
		case ']':
			stack = stack[:len(stack)-1]
			valueEnded()
		default:
			valueEnded()
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return in, errors.New("input has data after the JSON object")
	}
	return in, nil
}

// addKey records k in an object frame, refusing a key equal to an earlier
// one or differing from it only in case.
func (f *inputFrame) addKey(k string) error {
	fk := foldKey(k)
	if f.keys == nil {
		f.keys = make(map[string]string, 8)
	}
	if prev, dup := f.keys[fk]; dup {
		if prev == k {
			return fmt.Errorf("input has the key %q twice", clipKey(k))
		}
		return fmt.Errorf("input has the keys %q and %q, which differ only in case", clipKey(prev), clipKey(k))
	}
	f.keys[fk] = k
	return nil
}

// variantOf returns the known field k is a case variant of, or "".
func variantOf(k string) string {
	for _, name := range knownFields {
		if k != name && strings.EqualFold(k, name) {
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
	return k[:maxKeyShown] + "..."
}

// jsonErrText keeps a decoder error short and free of the input's content.
func jsonErrText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

// rawString returns a field's string value. present is false for a missing
// or null field; ok is false for a field of another type.
func rawString(raw json.RawMessage) (s string, present, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, true
	}
	if json.Unmarshal(raw, &s) != nil {
		return "", true, false
	}
	return s, true, true
}

// shellCommand returns the command line of a shell tool's input: `command`
// or `cmd`, a string or an argv array. An argv that is a shell's -c
// invocation (Codex sends ["bash", "-lc", "..."]) yields its script; any
// other argv is re-quoted so the analyser sees the same words.
func shellCommand(in toolInput) (string, bool) {
	raw := in.Command
	if len(raw) == 0 || string(raw) == "null" {
		raw = in.Cmd
	}
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, strings.TrimSpace(s) != ""
	}
	var argv []string
	if json.Unmarshal(raw, &argv) != nil || len(argv) == 0 {
		return "", false
	}
	if len(argv) == 3 && isShellName(argv[0]) && isDashC(argv[1]) {
		return argv[2], strings.TrimSpace(argv[2]) != ""
	}
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellQuote(a))
	}
	return b.String(), true
}

func isShellName(s string) bool {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	switch s {
	case "bash", "sh", "zsh", "dash", "ksh":
		return true
	}
	return false
}

// isDashC reports whether a shell option word is -c possibly combined with
// other single-letter options (-lc, -ec).
func isDashC(s string) bool {
	if len(s) < 2 || s[0] != '-' || s[1] == '-' || !strings.HasSuffix(s, "c") {
		return false
	}
	for _, r := range s[1:] {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// shellQuote quotes s for a POSIX shell when it has anything special.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("-_./=:,+@%", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// inputPaths returns the path(s) a path tool's input names: every one of
// file_path, path, notebook_path, filePath and absolute_path that is set,
// and for patch tools the files a patch touches. All of them are judged,
// since the gate cannot know which one the tool will use. ok is false when
// a path field has the wrong type.
func inputPaths(in toolInput) (paths []string, ok bool) {
	add := func(p string) {
		for _, q := range paths {
			if q == p {
				return
			}
		}
		paths = append(paths, p)
	}
	for _, raw := range [...]json.RawMessage{in.FilePath, in.Path, in.NotebookPath, in.FilePathJS, in.AbsolutePath} {
		s, present, ok := rawString(raw)
		if !ok {
			return nil, false
		}
		if present && s != "" {
			add(s)
		}
	}
	for _, raw := range [...]json.RawMessage{in.Input, in.Patch, in.PatchText} {
		s, present, ok := rawString(raw)
		if !ok {
			return nil, false
		}
		if present && s != "" {
			for _, p := range patchPaths(s) {
				add(p)
			}
		}
	}
	return paths, true
}

// patchPaths lists the files a patch touches: Codex/opencode patch headers
// (*** Add File: p, *** Update File: p, *** Delete File: p, *** Move to: p)
// and unified diff headers (--- a/p, +++ b/p).
func patchPaths(text string) []string {
	var out []string
	add := func(p string) {
		p = strings.TrimSpace(p)
		if p == "" || p == "/dev/null" {
			return
		}
		for _, q := range out {
			if q == p {
				return
			}
		}
		out = append(out, p)
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		for _, pre := range [...]string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if rest, ok := strings.CutPrefix(line, pre); ok {
				add(rest)
			}
		}
		for _, pre := range [...]string{"--- ", "+++ "} {
			if rest, ok := strings.CutPrefix(line, pre); ok {
				if i := strings.IndexByte(rest, '\t'); i >= 0 {
					rest = rest[:i]
				}
				if r, ok := strings.CutPrefix(rest, "a/"); ok {
					rest = r
				} else if r, ok := strings.CutPrefix(rest, "b/"); ok {
					rest = r
				}
				add(rest)
			}
		}
	}
	return out
}

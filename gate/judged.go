package gate

import "encoding/json"

// Judged is a call's tool input as the gate read it to judge the call:
// decoded once, with exact keys (scanInput), and normalized. Frontends
// render a prompt from it, never from their own reading of Approval.Input,
// so what a person approves is what was judged.
type Judged struct {
	// Kind is the tool's kind under the rules in force when it was judged.
	Kind ToolKind `json:"kind"`
	// Command is a shell tool's command line exactly as the shell analysis
	// read it (an argv array re-quoted, `bash -lc SCRIPT` as SCRIPT).
	Command string `json:"command,omitempty"`
	// Workdir is a shell tool's `workdir` (or Gemini's `dir_path`,
	// `directory`) field as given.
	Workdir string `json:"workdir,omitempty"`
	// Paths are a path tool's paths as the rules matched them: every path
	// field of the input (and every file of a patch), made absolute against
	// the cwd with `~` expanded; a path that cannot be resolved stays as given.
	Paths []string `json:"paths,omitempty"`
	// Edits are the replacements of an edit (Edit, MultiEdit), shown as a diff.
	Edits []Edit `json:"edits,omitempty"`
	// Content is the new text of a write (Write's content, NotebookEdit's
	// new_source); nil when the input has none.
	Content *string `json:"content,omitempty"`
	// Patch is a patch tool's patch text (apply_patch), whose files are in Paths.
	Patch string `json:"patch,omitempty"`
}

// Edit is one replacement of an edit tool.
type Edit struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// judgeInput returns what the gate judges of call c, whose tool has kind k
// and whose input scanInput decoded as in, with home for `~`. It reads the
// input with the same functions the evaluation uses (shellCommand,
// inputPaths, resolvePath), so the command and paths are the ones the
// rules were matched against.
func judgeInput(k ToolKind, c Call, in toolInput, home string) *Judged {
	j := &Judged{Kind: k}
	switch k {
	case KindShell:
		if line, ok := shellCommand(in); ok {
			j.Command = line
		}
		for _, raw := range []json.RawMessage{in.Workdir, in.DirPath, in.Directory} {
			if wd, present, ok := rawString(raw); present && ok && j.Workdir == "" {
				j.Workdir = wd // where it runs, whichever field said it
			}
		}
	case KindRead, KindWrite:
		j.Paths, _ = inputPaths(in)
		if len(j.Paths) == 0 && searchTools[c.Tool] && c.Cwd != "" {
			j.Paths = []string{c.Cwd} // Glob/Grep/LS without a path search the cwd
		}
		for i, p := range j.Paths {
			if ps, ok := resolvePath(p, c.Cwd, home); ok {
				j.Paths[i] = ps.abs
			}
		}
		if k == KindWrite && faithfulWrite(c.Input) {
			j.addWrite(in)
		}
	}
	return j
}

// addWrite fills the text a write-kind tool would write.
func (j *Judged) addWrite(in toolInput) {
	str := func(raw json.RawMessage) (string, bool) {
		s, present, ok := rawString(raw)
		return s, present && ok
	}
	if o, ok := str(in.OldString); ok {
		if n, ok := str(in.NewString); ok {
			j.Edits = append(j.Edits, Edit{Old: o, New: n})
		}
	}
	var edits []json.RawMessage // splitting an array reads no keys
	if len(in.Edits) > 0 && json.Unmarshal(in.Edits, &edits) == nil {
		for _, raw := range edits {
			e, err := scanInput(raw, false)
			o, ok1 := str(e.OldString)
			n, ok2 := str(e.NewString)
			if err != nil || !ok1 || !ok2 {
				j.Edits = nil // shown as the raw input instead of a partial diff
				break
			}
			j.Edits = append(j.Edits, Edit{Old: o, New: n})
		}
	}
	for _, raw := range [...]json.RawMessage{in.Content, in.NewSource} {
		if s, ok := str(raw); ok {
			j.Content = &s
			break
		}
	}
	for _, raw := range [...]json.RawMessage{in.Input, in.Patch, in.PatchText} {
		if s, ok := str(raw); ok && s != "" {
			j.Patch = s
			break
		}
	}
}

// faithfulWrite reports a write tool's input that one rendering shows
// whole: its keys are paths and the fields of one kind of text (an edit,
// a content, a patch). Another key (Copilot's file_text, opencode's
// oldString) or two kinds at once (a decoy old_string beside the content
// Gemini writes) leave the prompt to show the raw input whole, as does
// replace_all (every occurrence, not the one hunk a diff shows).
func faithfulWrite(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	kinds := map[string]bool{}
	if _, c := m["content"]; c {
		if _, n := m["new_source"]; n {
			return false // which one the tool writes is the tool's
		}
	}
	for k, v := range m {
		switch k {
		case "file_path", "path", "filePath", "absolute_path", "notebook_path", "cell_id", "cell_type":
		case "edit_mode":
			if string(v) != `"replace"` {
				return false // insert, delete: not what a diff of new_source shows
			}
		case "expected_replacements":
			if string(v) != "1" {
				return false // every occurrence, not the one hunk a diff shows
			}
		case "edits":
			kinds["edit"] = true
			var edits []map[string]json.RawMessage
			if json.Unmarshal(v, &edits) != nil {
				return false
			}
			for _, e := range edits {
				for ek, ev := range e {
					if ek != "old_string" && ek != "new_string" && !(ek == "replace_all" && string(ev) == "false") {
						return false
					}
				}
			}
		case "old_string", "new_string":
			kinds["edit"] = true
		case "content", "new_source":
			kinds["content"] = true
		case "input", "patch", "patchText":
			kinds["patch"] = true
		case "replace_all":
			if string(v) != "false" {
				return false
			}
		default:
			return false
		}
	}
	return len(kinds) <= 1
}

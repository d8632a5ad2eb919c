package gate

import (
	"encoding/json"
	"strings"
	"unicode"
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
	"Monitor":    KindShell, // Claude Code: runs a bash command and streams its output
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
	"create":             KindWrite, // GitHub Copilot CLI
	"str_replace_editor": KindWrite, "str_replace_based_edit_tool": KindWrite,
}

// contentSearchTools read every file below their path (ripgrep-like:
// hidden files left out unless a glob brings them back).
var contentSearchTools = map[string]bool{"Grep": true, "grep": true, "search_file_content": true}

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

// DefaultToolKind returns the built-in kind of tool, "" for a tool the
// table does not name.
func DefaultToolKind(tool string) ToolKind { return defaultToolKinds[tool] }

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
	DirPath      json.RawMessage // dir_path (Gemini CLI)
	Directory    json.RawMessage // directory (Gemini CLI before dir_path)
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
	// A search tool's file filter (Claude Code's Grep glob, ...): it can
	// bring hidden files back into a search.
	Glob    json.RawMessage // glob
	Include json.RawMessage // include (opencode's grep, Gemini's read_many_files)
	// The shell that runs a command (Codex's exec_command).
	Shell json.RawMessage // shell
}

// field returns where the value of the known top-level key name goes, or
// nil for a key the gate does not read.
func (in *toolInput) field(name []byte) *json.RawMessage {
	switch string(name) {
	case "command":
		return &in.Command
	case "cmd":
		return &in.Cmd
	case "workdir":
		return &in.Workdir
	case "dir_path":
		return &in.DirPath
	case "directory":
		return &in.Directory
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
	case "glob":
		return &in.Glob
	case "include":
		return &in.Include
	case "shell":
		return &in.Shell
	}
	return nil
}

// knownFields are the keys toolInput reads, for the case-variant check.
var knownFields = []string{"command", "cmd", "workdir", "dir_path", "directory", "file_path", "path", "notebook_path", "filePath",
	"absolute_path", "input", "patch", "patchText", "old_string", "new_string", "content", "new_source", "edits", "glob", "include", "shell"}

// decodeInput parses a tool input object with exact keys (see scanInput).
// An empty input is the empty object; anything else scanInput refuses is
// unusable.
func decodeInput(raw json.RawMessage) (toolInput, bool) {
	in, err := scanInput(raw, true)
	return in, err == nil
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
	} else if len(in.Cmd) > 0 && string(in.Cmd) != "null" {
		// Both: hosts differ on which one runs (Codex's exec_command runs
		// cmd), so neither can be judged alone.
		return "", false
	}
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return "", false
		}
		// Codex's exec_command runs cmd in the shell the model names: one
		// that is not bash or zsh is judged as that shell's -c (sh is
		// dash on Debian, which reads $'...' otherwise).
		if sh, present, ok := rawString(in.Shell); !ok {
			return "", false
		} else if present && !bashOrZsh(sh) {
			return ShellQuote(sh) + " -c " + ShellQuote(s), true
		}
		return s, true
	}
	var argv []string
	if json.Unmarshal(raw, &argv) != nil || len(argv) == 0 {
		return "", false
	}
	if len(argv) == 3 && bashOrZsh(argv[0]) && isDashC(argv[1]) {
		return argv[2], strings.TrimSpace(argv[2]) != ""
	}
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ShellQuote(a))
	}
	return b.String(), true
}

// bashOrZsh reports bash or zsh by name or at a system path: what reads
// a command line as the analysis does. sh (dash), ksh and a bash of the
// project's own (./bash) are judged as the programs they are.
func bashOrZsh(s string) bool {
	switch s {
	case "bash", "zsh", "/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/opt/homebrew/bin/bash",
		"/bin/zsh", "/usr/bin/zsh", "/usr/local/bin/zsh", "/opt/homebrew/bin/zsh":
		return true
	}
	return false
}

// isDashC reports whether a shell option word is -c possibly combined with
// other single-letter options (-lc, -ec).
func isDashC(s string) bool {
	// Only -c and -lc (what Codex sends): other options change how the
	// script is read (-k, -a, -x with PS4, ...), so such an argv is judged
	// whole, options and all.
	return s == "-c" || s == "-lc"
}

// ShellQuote quotes s for a POSIX shell when it has anything special.
func ShellQuote(s string) string {
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
// file_path, path, notebook_path, filePath, absolute_path, dir_path and
// directory that is set,
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
	// Gemini CLI's list_directory, glob and search tools take dir_path.
	for _, raw := range [...]json.RawMessage{in.FilePath, in.Path, in.NotebookPath, in.FilePathJS, in.AbsolutePath, in.DirPath, in.Directory} {
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
			ps, ok := patchPaths(s)
			if !ok {
				return nil, false
			}
			for _, p := range ps {
				add(p)
			}
		}
	}
	return paths, true
}

// patchPaths lists the files a patch touches: Codex/opencode patch headers
// (*** Add File: p, *** Update File: p, *** Delete File: p, *** Move to: p)
// and unified diff headers (--- a/p, +++ b/p). Headers are read as
// leniently as the most lenient agent does: opencode takes them without
// the space after the colon and trims paths as JavaScript does (a leading
// byte-order mark too). ok is false for another `***` line, which some
// parser might read as a header the gate did not see.
func patchPaths(text string) (out []string, ok bool) {
	add := func(p string) {
		p = jsTrim(p)
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
		// Codex's parser trims each header line: padding must not hide one.
		line = jsTrim(line)
		if rest, isHeader := strings.CutPrefix(line, "***"); isHeader {
			known := false
			for _, pre := range [...]string{"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"} {
				if p, found := strings.CutPrefix(line, pre); found {
					add(p)
					known = true
				}
			}
			switch r := jsTrim(rest); {
			case r == "Begin Patch" || r == "End Patch" || r == "End of File":
				known = true
			case !strings.ContainsAny(r, ":") && !strings.Contains(r, "File") && !strings.Contains(r, "Patch") && !strings.Contains(r, "Move"):
				known = true // a line of text (a Markdown rule, a comment)
			}
			if !known {
				return nil, false
			}
			continue
		}
		for _, pre := range [...]string{"--- ", "+++ "} {
			if rest, found := strings.CutPrefix(line, pre); found {
				if i := strings.IndexByte(rest, '\t'); i >= 0 {
					rest = rest[:i]
				}
				if r, found := strings.CutPrefix(rest, "a/"); found {
					rest = r
				} else if r, found := strings.CutPrefix(rest, "b/"); found {
					rest = r
				}
				add(rest)
			}
		}
	}
	return out, true
}

// jsTrim trims s as JavaScript's String.prototype.trim does, and more:
// white space, line terminators and the byte-order mark.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
}

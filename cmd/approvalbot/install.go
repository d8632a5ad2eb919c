package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"approvalbot/agents"
)

// hostTimeoutMargin is how much longer than the hook's own deadline
// (--timeout) the host waits for it: the hook must answer deny itself,
// withdrawing its approval, before the host kills it (most hosts let the
// call run when a hook times out). withdrawGrace in agents is 10 s.
const hostTimeoutMargin = 20 * time.Second

const installUsage = `usage: approvalbot install claude|codex|gemini|copilot|cursor|opencode [--project DIR] [--dry-run] [--timeout D]

Writes the agent's hook configuration so that every tool call goes through
approvalbot: into the agent's user settings, or with --project into DIR's
project settings. Existing settings are kept (merged), a changed file is
backed up first, and running it again changes nothing. The hook is the
approvalbot binary you ran, by absolute path. APPROVALBOT_URL, when set, is
written into the hook command; APPROVALBOT_TOKEN never is (give it to the
agent's environment).

flags:
`

// installFlags are `approvalbot install`'s flags.
type installFlags struct {
	project string
	dryRun  bool
	timeout time.Duration
}

// installPlan is what install writes for one agent.
type installPlan struct {
	files []plannedFile
	// todo lists what is left to the person.
	todo []string
}

type plannedFile struct {
	path    string
	content []byte
	note    string // said after the path when written
}

func runInstall(ctx context.Context, e *env, args []string) int {
	var f installFlags
	fs := flag.NewFlagSet("approvalbot install", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { fmt.Fprint(e.stderr, installUsage); fs.PrintDefaults() }
	fs.StringVar(&f.project, "project", "", "write the project's settings in `DIR` instead of your user settings")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print what would be written, change nothing")
	fs.DurationVar(&f.timeout, "timeout", agents.DefaultHookTimeout, "the hook's own deadline per call (keep it above APPROVALBOT_TIMEOUT); the agent's hook timeout is set "+hostTimeoutMargin.String()+" above it")
	if len(args) == 0 {
		fs.Usage()
		return exitUsage
	}
	agent := args[0]
	if agent == "-h" || agent == "--help" {
		fs.Usage()
		return exitOK
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "approvalbot install: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	if f.timeout <= 0 {
		fmt.Fprintln(e.stderr, "approvalbot install: --timeout must be positive")
		return exitUsage
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot install: cannot find the approvalbot binary's path: %v\n", err)
		return exitFailure
	}
	if f.project != "" {
		if f.project, err = filepath.Abs(f.project); err != nil {
			fmt.Fprintf(e.stderr, "approvalbot install: %v\n", err)
			return exitUsage
		}
		if st, err := os.Stat(f.project); err != nil || !st.IsDir() {
			fmt.Fprintf(e.stderr, "approvalbot install: --project %s is not a directory\n", f.project)
			return exitUsage
		}
	}
	in := installer{e: e, exe: exe, flags: f, home: e.getenv("HOME")}
	if in.home == "" && f.project == "" {
		fmt.Fprintln(e.stderr, "approvalbot install: HOME is not set; use --project DIR")
		return exitUsage
	}
	plan, err := in.plan(agent)
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot install %s: %v\n", agent, err)
		if errors.Is(err, errUnknownAgent) {
			return exitUsage
		}
		return exitFailure
	}
	if err := in.apply(plan); err != nil {
		fmt.Fprintf(e.stderr, "approvalbot install %s: %v\n", agent, err)
		return exitFailure
	}
	if w := in.timeoutWarning(); w != "" {
		plan.todo = append([]string{w}, plan.todo...)
	}
	if len(plan.todo) > 0 {
		fmt.Fprintln(e.stdout, "\nLeft to you:")
		for _, t := range plan.todo {
			fmt.Fprintf(e.stdout, "  - %s\n", t)
		}
	}
	return exitOK
}

// installAgents are the agents install sets up, in the order doctor
// reports them.
var installAgents = []string{"claude", "codex", "gemini", "copilot", "cursor", "opencode"}

var errUnknownAgent = errors.New("unknown agent: claude, codex, gemini, copilot, cursor or opencode")

type installer struct {
	e     *env
	exe   string
	flags installFlags
	home  string
}

// hostTimeout is the agent's hook timeout to write.
func (in installer) hostTimeout() time.Duration { return in.flags.timeout + hostTimeoutMargin }

// hookArgv is the hook command as an argument list.
func (in installer) hookArgv(kind string) []string {
	argv := []string{in.exe, "hook", kind}
	if in.flags.timeout != agents.DefaultHookTimeout {
		argv = append(argv, "--timeout", in.flags.timeout.String())
	}
	return argv
}

// hookEnv is the environment written into the hook command.
func (in installer) hookEnv() map[string]string {
	if u := in.e.getenv("APPROVALBOT_URL"); u != "" {
		return map[string]string{"APPROVALBOT_URL": u}
	}
	return nil
}

// hookCommand is the hook command as one shell command line.
func (in installer) hookCommand(kind string) string {
	var parts []string
	if env := in.hookEnv(); env != nil {
		parts = append(parts, "APPROVALBOT_URL="+shellQuote(env["APPROVALBOT_URL"]))
	}
	for _, a := range in.hookArgv(kind) {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// timeoutWarning says when the approval timeout the environment names is
// not below the hook's deadline (the hook would then deny before a person
// can answer).
func (in installer) timeoutWarning() string {
	s := in.e.getenv("APPROVALBOT_TIMEOUT")
	if s == "" {
		return ""
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < in.flags.timeout {
		return ""
	}
	return fmt.Sprintf("APPROVALBOT_TIMEOUT (%s) is not below the hook's --timeout (%s): calls would be denied before the approval expires; run install again with a larger --timeout", d, in.flags.timeout)
}

// dir returns the settings directory: DIR/rel with --project, else
// HOME/rel (or the override, when the agent's environment variable is set).
func (in installer) dir(projectRel, userRel, override string) string {
	if in.flags.project != "" {
		return filepath.Join(in.flags.project, projectRel)
	}
	if override != "" {
		if o := in.e.getenv(override); o != "" {
			return o
		}
	}
	return filepath.Join(in.home, userRel)
}

// hookSite is where an agent keeps approvalbot's hook and in what shape:
// what install writes and doctor reads back.
type hookSite struct {
	agent string
	path  string
	// keys lead to the hook list in the file; nil for opencode, whose hook
	// is a plugin file of its own.
	keys []string
	// matcher, when set, makes the list one of matcher groups
	// ([{"matcher": m, "hooks": [entry...]}]: Claude Code, Codex, Gemini
	// CLI); else the list holds the entries (Copilot CLI, Cursor).
	matcher string
	// failSafe are the entry's fields that stop the host from running the
	// call when the hook fails or times out.
	failSafe map[string]any
	// top are top-level keys the file must have.
	top map[string]any
}

// site returns where agent's hook goes: the user settings, or with
// --project the project's.
func (in installer) site(agent string) (hookSite, error) {
	s := hookSite{agent: agent}
	switch agent {
	case "claude":
		s.path = filepath.Join(in.dir(".claude", ".claude", ""), "settings.json")
		s.keys, s.matcher = []string{"hooks", "PreToolUse"}, "*"
		// A Claude Code hook that fails lets the call through to Claude's
		// own permission flow unless it blocks.
		s.failSafe = map[string]any{"onFailure": "block"}
	case "codex":
		s.path = filepath.Join(in.dir(".codex", ".codex", "CODEX_HOME"), "hooks.json")
		s.keys, s.matcher = []string{"hooks", "PreToolUse"}, ".*"
	case "gemini":
		s.path = filepath.Join(in.dir(".gemini", ".gemini", ""), "settings.json")
		s.keys, s.matcher = []string{"hooks", "BeforeTool"}, ".*"
	case "copilot":
		if in.flags.project != "" {
			s.path = filepath.Join(in.flags.project, ".github", "hooks", "approvalbot.json")
			s.top = map[string]any{"version": 1}
		} else {
			s.path = filepath.Join(in.dir("", ".copilot", "COPILOT_HOME"), "settings.json")
		}
		s.keys = []string{"hooks", "preToolUse"}
	case "cursor":
		s.path = filepath.Join(in.dir(".cursor", ".cursor", ""), "hooks.json")
		s.keys = []string{"hooks", "preToolUse"}
		s.failSafe = map[string]any{"failClosed": true}
		s.top = map[string]any{"version": 1}
	case "opencode":
		var dir string
		if in.flags.project != "" {
			dir = filepath.Join(in.flags.project, ".opencode", "plugin")
		} else if x := in.e.getenv("XDG_CONFIG_HOME"); x != "" {
			dir = filepath.Join(x, "opencode", "plugin")
		} else {
			dir = filepath.Join(in.home, ".config", "opencode", "plugin")
		}
		s.path = filepath.Join(dir, agents.OpencodePluginFile)
	default:
		return hookSite{}, errUnknownAgent
	}
	return s, nil
}

// merge returns the site's file with entry (and the fail-safe fields) put
// in place of approvalbot's hook, or added.
func (s hookSite) merge(entry map[string]any, ours func(string) bool) ([]byte, string, error) {
	for k, v := range s.failSafe {
		entry[k] = v
	}
	if s.matcher != "" {
		return mergeHookGroup(s.path, s.keys, s.matcher, entry, ours, s.top)
	}
	return mergeHookList(s.path, s.keys, entry, ours, s.top)
}

func (in installer) plan(agent string) (installPlan, error) {
	site, err := in.site(agent)
	if err != nil {
		return installPlan{}, err
	}
	secs := int(in.hostTimeout() / time.Second)
	var entry map[string]any
	var todo []string
	switch agent {
	case "claude":
		entry = map[string]any{"type": "command", "command": in.hookCommand("claude"), "timeout": secs}
		todo = []string{"give Claude Code APPROVALBOT_TOKEN in its environment if the daemon has APPROVALBOT_API_TOKENS"}
	case "codex":
		entry = map[string]any{"type": "command", "command": in.hookCommand("codex"), "timeout": secs}
		todo = []string{
			"Codex runs a hook only once you trust it, and says nothing otherwise: open `codex`, then `/hooks`, select the approvalbot hook and trust it (press t). Trust again after every change to " + site.path + ".",
			"for `codex exec` in automation, pass --dangerously-bypass-hook-trust instead",
		}
	case "gemini":
		entry = map[string]any{"type": "command", "name": "approvalbot", "command": in.hookCommand("gemini"), "timeout": int(in.hostTimeout() / time.Millisecond)}
		folder := "each folder you run gemini in"
		if in.flags.project != "" {
			folder = in.flags.project
		}
		todo = []string{"Gemini CLI skips hooks in a folder it does not trust: trust " + folder + " (gemini asks on first start, or /permissions; ~/.gemini/trustedFolders.json)"}
	case "copilot":
		entry = map[string]any{"type": "command", "bash": in.hookCommand("copilot"), "timeoutSec": secs}
		todo = []string{"Copilot CLI runs the tool when a hook times out: keep approvals shorter than the hook's --timeout (" + in.flags.timeout.String() + ")"}
	case "cursor":
		entry = map[string]any{"command": in.hookCommand("cursor"), "timeout": secs}
		todo = []string{"Cursor versions without the preToolUse hook need the same entry under beforeShellExecution (shell commands only)"}
	case "opencode":
		return installPlan{files: []plannedFile{{site.path, []byte(agents.OpencodePlugin(in.hookArgv("opencode"), in.hookEnv())), ""}}, todo: []string{
			"opencode's own permission checks still run after approvalbot allows a call: set \"permission\" in opencode.json to allow what approvalbot gates, or `opencode run --auto`",
			"offline, opencode tries to `npm install @opencode-ai/plugin` at every start once a plugin exists (about 70 s): install it once into " + filepath.Dir(filepath.Dir(site.path)),
		}}, nil
	}
	b, note, err := site.merge(entry, in.isOurs(agent))
	if err != nil {
		return installPlan{}, err
	}
	return installPlan{files: []plannedFile{{site.path, b, note}}, todo: todo}, nil
}

// apply writes the plan (or, with --dry-run, prints it).
func (in installer) apply(plan installPlan) error {
	for _, f := range plan.files {
		old, err := os.ReadFile(f.path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read %s: %w", f.path, err)
		}
		exists := err == nil
		if exists && bytes.Equal(old, f.content) {
			fmt.Fprintf(in.e.stdout, "%s: already set up, unchanged\n", f.path)
			continue
		}
		if in.flags.dryRun {
			verb := "create"
			if exists {
				verb = "update"
			}
			fmt.Fprintf(in.e.stdout, "would %s %s%s:\n%s", verb, f.path, f.note, f.content)
			continue
		}
		backup := ""
		if exists {
			backup = backupName(f.path, time.Now())
			if err := copyFile(f.path, backup); err != nil {
				return fmt.Errorf("back up %s: %w", f.path, err)
			}
		}
		if err := writeFileAtomic(f.path, f.content); err != nil {
			return err
		}
		if exists {
			fmt.Fprintf(in.e.stdout, "updated %s%s (the old one is %s)\n", f.path, f.note, backup)
		} else {
			fmt.Fprintf(in.e.stdout, "created %s%s\n", f.path, f.note)
		}
	}
	return nil
}

// isOurs reports whether a hook command line is approvalbot's hook for
// kind: this binary's, or one naming approvalbot (an older install, or the
// README's `approvalbot hook claude`).
func (in installer) isOurs(kind string) func(string) bool {
	return func(cmd string) bool {
		if !strings.Contains(cmd, "approvalbot") && !strings.Contains(cmd, in.exe) {
			return false
		}
		i := strings.Index(cmd, " hook "+kind)
		if i < 0 {
			return false
		}
		rest := cmd[i+len(" hook "+kind):]
		return rest == "" || rest[0] == ' '
	}
}

// loadSettings reads a JSON settings file (comments and trailing commas
// allowed, as Gemini CLI's are); a missing file is empty settings.
func loadSettings(path string) (root map[string]any, note string, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{}, "", nil
	}
	std, err := hujson.Standardize(append([]byte(nil), b...))
	if err != nil {
		return nil, "", fmt.Errorf("%s is not valid JSON (%v); fix it or move it away, then run install again", path, err)
	}
	if err := json.Unmarshal(std, &root); err != nil || root == nil {
		return nil, "", fmt.Errorf("%s does not hold a JSON object; fix it or move it away, then run install again", path)
	}
	if !json.Valid(b) {
		note = " (its comments are not kept)"
	}
	return root, note, nil
}

// objectAt walks (creating) nested objects along keys.
func objectAt(root map[string]any, keys []string) (map[string]any, error) {
	cur := root
	for _, k := range keys {
		v, ok := cur[k]
		if !ok || v == nil {
			m := map[string]any{}
			cur[k] = m
			cur = m
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q is not an object", k)
		}
		cur = m
	}
	return cur, nil
}

// editHookList loads the settings at path, fills in the top-level keys of
// top it lacks, hands the list at keys to edit and encodes the result:
// the part mergeHookGroup and mergeHookList share.
func editHookList(path string, keys []string, top map[string]any, edit func([]any) []any) ([]byte, string, error) {
	root, note, err := loadSettings(path)
	if err != nil {
		return nil, "", err
	}
	for k, v := range top {
		if _, ok := root[k]; !ok {
			root[k] = v
		}
	}
	parent, err := objectAt(root, keys[:len(keys)-1])
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	last := keys[len(keys)-1]
	list, _ := parent[last].([]any)
	if parent[last] != nil && list == nil {
		return nil, "", fmt.Errorf("%s: %q is not a list", path, last)
	}
	parent[last] = edit(list)
	b, err := marshalSettings(root)
	return b, note, err
}

// mergeHookGroup puts entry into the matcher-group list at keys (Claude
// Code, Codex and Gemini CLI: [{"matcher": m, "hooks": [entry...]}]):
// an existing approvalbot entry is replaced in place, else a new group is
// appended. Everything else is kept.
func mergeHookGroup(path string, keys []string, matcher string, entry map[string]any, ours func(string) bool, top map[string]any) ([]byte, string, error) {
	return editHookList(path, keys, top, func(groups []any) []any {
		found := false
		for _, g := range groups {
			gm, ok := g.(map[string]any)
			if !ok {
				continue
			}
			hooks, _ := gm["hooks"].([]any)
			if hooks != nil {
				gm["hooks"] = replaceOurs(hooks, entry, ours, &found)
			}
		}
		if !found {
			groups = append(groups, map[string]any{"matcher": matcher, "hooks": []any{entry}})
		}
		return groups
	})
}

// mergeHookList puts entry into the flat hook list at keys (Copilot CLI and
// Cursor: [entry...]), replacing an existing approvalbot entry in place.
func mergeHookList(path string, keys []string, entry map[string]any, ours func(string) bool, top map[string]any) ([]byte, string, error) {
	return editHookList(path, keys, top, func(list []any) []any {
		found := false
		kept := replaceOurs(list, entry, ours, &found)
		if !found {
			kept = append(kept, entry)
		}
		return kept
	})
}

// replaceOurs returns hooks with the first approvalbot entry replaced by
// entry and any further ones dropped; *found is set once entry is placed
// (and then later lists only drop theirs).
func replaceOurs(hooks []any, entry map[string]any, ours func(string) bool, found *bool) []any {
	var kept []any
	for _, h := range hooks {
		if hm, ok := h.(map[string]any); ok && ours(hookEntryCommand(hm)) {
			if !*found {
				kept = append(kept, entry)
				*found = true
			}
			continue
		}
		kept = append(kept, h)
	}
	return kept
}

// foundHook is approvalbot's hook entry as found in a site's file.
type foundHook struct {
	entry   map[string]any
	command string
	// group and index place it: the matcher group and the entry in the
	// group's hooks (group is 0 in a flat list), as Codex numbers hooks.
	group, index int
}

// find reads the site's file back and returns approvalbot's hook entries
// in it (none when the file does not exist). Not for opencode's plugin.
func (s hookSite) find(ours func(string) bool) ([]foundHook, error) {
	root, _, err := loadSettings(s.path)
	if err != nil {
		return nil, err
	}
	list, _ := lookupPath(root, s.keys...).([]any)
	var out []foundHook
	entries := func(group int, hooks []any) {
		for i, h := range hooks {
			if hm, ok := h.(map[string]any); ok && ours(hookEntryCommand(hm)) {
				out = append(out, foundHook{entry: hm, command: hookEntryCommand(hm), group: group, index: i})
			}
		}
	}
	if s.matcher == "" {
		entries(0, list)
		return out, nil
	}
	for g, grp := range list {
		gm, _ := grp.(map[string]any)
		hooks, _ := gm["hooks"].([]any)
		entries(g, hooks)
	}
	return out, nil
}

// lookupPath walks nested objects along keys; nil when one is missing.
func lookupPath(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// hookEntryCommand is a hook entry's command line: "command", or Copilot
// CLI's "bash".
func hookEntryCommand(hm map[string]any) string {
	if bash, _ := hm["bash"].(string); bash != "" {
		return bash
	}
	cmd, _ := hm["command"].(string)
	return cmd
}

func marshalSettings(root map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("encode settings: %w", err)
	}
	return buf.Bytes(), nil
}

// writeFileAtomic writes path through a temporary file and a rename, with
// the old file's mode (new files 0600: settings may hold tokens).
func writeFileAtomic(path string, b []byte) error {
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// backupName is a name for a backup of path that is not taken yet.
func backupName(path string, now time.Time) string {
	base := fmt.Sprintf("%s.approvalbot-%s", path, now.Format("20060102-150405"))
	name := base + ".bak"
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s-%d.bak", base, i)
	}
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, st.Mode().Perm())
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

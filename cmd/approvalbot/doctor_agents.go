package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// agentDoctor checks, per agent, the hook `approvalbot install` writes:
// in the user settings and in the project's.
type agentDoctor struct {
	e       *env
	home    string // "" when HOME is unset: only the project is looked at
	project string // the folder whose project settings and trust are checked
	exe     string // this binary, which a hook may name instead of "approvalbot"
}

// checkAgents reports each agent's hook: not set up, or where it is, the
// binary it runs, and what the host needs besides (trust, fail-closed).
func checkAgents(e *env, project string) []check {
	d := agentDoctor{e: e, home: e.getenv("HOME"), project: project}
	if exe, err := os.Executable(); err == nil {
		d.exe, _ = filepath.EvalSymlinks(exe)
	}
	var out []check
	for _, agent := range installAgents {
		out = append(out, d.check(agent)...)
	}
	return out
}

// installers are the scopes install writes to, as installers: the user's
// (when HOME is set) and the project's.
func (d agentDoctor) installers() []installer {
	var out []installer
	if d.home != "" {
		out = append(out, installer{e: d.e, exe: d.exe, home: d.home})
	}
	if d.project != "" {
		out = append(out, installer{e: d.e, exe: d.exe, home: d.home, flags: installFlags{project: d.project}})
	}
	return out
}

// check reports agent's hook in every scope it is found in, or that it is
// not set up.
func (d agentDoctor) check(agent string) []check {
	name := agent + " hook"
	var out []check
	var looked []string
	for _, in := range d.installers() {
		site, err := in.site(agent)
		if err != nil || slices.Contains(looked, site.path) {
			continue
		}
		looked = append(looked, site.path)
		if c, found := d.checkSite(in, site); found {
			c.name = name
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return []check{{name: name, ok: true, msg: fmt.Sprintf("not set up: `approvalbot install %s` gates %s (looked in %s)",
			agent, agentTitle[agent], strings.Join(d.tildes(looked), ", "))}}
	}
	return out
}

// agentTitle names the agents as their makers do.
var agentTitle = map[string]string{
	"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI",
	"copilot": "Copilot CLI", "cursor": "Cursor", "opencode": "opencode",
}

// checkSite checks approvalbot's hook in one settings file; found is false
// when the file does not hold it.
func (d agentDoctor) checkSite(in installer, site hookSite) (c check, found bool) {
	where := d.tilde(site.path)
	reinstall := "run `approvalbot install " + site.agent
	if in.flags.project != "" {
		reinstall += " --project " + in.flags.project
	}
	reinstall += "` again"
	if _, err := os.Stat(site.path); errors.Is(err, fs.ErrNotExist) {
		return check{}, false
	}
	var argv []string
	var hook foundHook // the entry, for the settings-file agents
	if site.agent == "opencode" {
		var err error
		if argv, err = opencodeHook(site.path); err != nil {
			return check{msg: where + ": " + err.Error(), fix: reinstall}, true
		}
	} else {
		hooks, err := site.find(in.isOurs(site.agent))
		if err != nil {
			return check{msg: err.Error(), fix: "fix " + where + " or move it away, then " + reinstall}, true
		}
		if len(hooks) == 0 {
			return check{}, false
		}
		hook = hooks[0]
		argv = hookArgs(hook.command)
	}

	bin := hookProgram(argv, site.agent)
	if bin == "" {
		return check{msg: where + ": cannot tell which program the hook runs", fix: reinstall}, true
	}
	if problem := d.programProblem(bin); problem != "" {
		return check{msg: where + ": the hook runs " + bin + ", which " + problem,
			fix: reinstall + " with the approvalbot binary you keep (the hook names it by absolute path)"}, true
	}
	c = check{ok: true, msg: where + " runs " + bin}
	for k, want := range site.failSafe {
		if hook.entry[k] != want {
			c.ok, c.fix = false, reinstall
			c.msg += fmt.Sprintf(`; the hook lacks "%s": %s, so %s runs the call when the hook fails`, k, jsonText(want), agentTitle[site.agent])
		}
	}
	if !c.ok {
		return c, true
	}
	switch site.agent {
	case "codex":
		c = d.codexTrust(c, site, hook)
	case "gemini":
		c = d.geminiTrust(c)
	}
	return c, true
}

// programProblem says what is wrong with the hook's program, or "".
func (d agentDoctor) programProblem(bin string) string {
	if bin == "" {
		return ""
	}
	if !filepath.IsAbs(bin) {
		if _, err := exec.LookPath(bin); err != nil {
			return "is not on this PATH (the agent's PATH may differ: an absolute path is safer)"
		}
		return ""
	}
	st, err := os.Stat(bin)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case err != nil:
		return "cannot be read: " + err.Error()
	case !st.Mode().IsRegular():
		return "is not a file"
	case st.Mode().Perm()&0o111 == 0:
		return "is not executable"
	}
	return ""
}

// hookArgs splits a hook's shell command line into words (nil when it is
// not a plain command).
func hookArgs(cmd string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) == 0 {
		return nil
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return nil
	}
	var out []string
	for _, w := range call.Args {
		s, err := expand.Literal(nil, w)
		if err != nil {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// hookProgram is the program in argv that runs `hook kind`.
func hookProgram(argv []string, kind string) string {
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == "hook" && argv[i+1] == kind {
			return argv[i-1]
		}
	}
	return ""
}

// opencodeHook reads the hook's argv back from approvalbot's opencode
// plugin (agents.OpencodePlugin writes it as `const HOOK = [...];`).
func opencodeHook(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "const HOOK = ")
		if !ok {
			continue
		}
		var argv []string
		if err := json.Unmarshal([]byte(strings.TrimSuffix(rest, ";")), &argv); err != nil {
			return nil, errors.New("the plugin's hook command does not parse")
		}
		return argv, nil
	}
	return nil, errors.New("not approvalbot's plugin, or an old one")
}

// codexTrust adds whether Codex trusts the hook: /hooks stores, in the
// user's config.toml, a [hooks.state."FILE:EVENT:GROUP:INDEX"] table with
// the hook's trusted_hash. Doctor cannot recompute the hash, so a hook
// changed since it was trusted still reads as trusted here.
func (d agentDoctor) codexTrust(c check, site hookSite, h foundHook) check {
	dir := d.e.getenv("CODEX_HOME")
	if dir == "" {
		dir = filepath.Join(d.home, ".codex")
	}
	conf := filepath.Join(dir, "config.toml")
	key := fmt.Sprintf("%s:%s:%d:%d", site.path, snakeCase(site.keys[len(site.keys)-1]), h.group, h.index)
	st, err := readCodexHookState(conf, key)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		c.ok, c.msg, c.fix = false, c.msg+"; cannot read "+d.tilde(conf)+": "+err.Error(), "make it readable, then check again"
	case st.trusted && !st.disabled:
		c.msg += "; trusted in Codex (/hooks)"
	case st.disabled:
		c.ok, c.msg = false, c.msg+"; disabled in Codex's /hooks"
		c.fix = "open `codex` → /hooks and enable approvalbot's hook"
	default:
		c.ok, c.msg = false, c.msg+"; not trusted yet: open codex → /hooks"
		c.fix = "open `codex`, then /hooks, select approvalbot's hook and trust it (t): until then Codex runs every call ungated; in automation pass `codex exec --dangerously-bypass-hook-trust`"
	}
	return c
}

// codexHookState is what Codex's config.toml says about one hook.
type codexHookState struct{ trusted, disabled bool }

// readCodexHookState finds key's [hooks.state."KEY"] table in a Codex
// config.toml (or its inline form under [hooks.state]). It reads only
// what /hooks writes, not TOML in general.
func readCodexHookState(path, key string) (codexHookState, error) {
	var st codexHookState
	f, err := os.Open(path)
	if err != nil {
		return st, err
	}
	defer f.Close()
	var table []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") && !strings.HasPrefix(line, "[[") {
			table, _ = tomlKey(strings.TrimSuffix(strings.TrimPrefix(line, "["), "]"))
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		parts, _ := tomlKey(k)
		full := append(slices.Clone(table), parts...)
		if len(full) >= 3 && full[0] == "hooks" && full[1] == "state" && full[2] == key {
			v = strings.TrimSpace(v)
			switch {
			case len(full) == 3 && strings.HasPrefix(v, "{"): // "KEY" = { trusted_hash = "..." }
				st.trusted = st.trusted || strings.Contains(v, "trusted_hash")
				st.disabled = st.disabled || strings.Contains(strings.ReplaceAll(v, " ", ""), "enabled=false")
			case len(full) == 4 && full[3] == "trusted_hash":
				st.trusted = st.trusted || len(v) > 2
			case len(full) == 4 && full[3] == "enabled":
				st.disabled = v == "false"
			}
		}
	}
	return st, sc.Err()
}

// tomlKey splits a dotted TOML key (bare, "basic" or 'literal' parts).
func tomlKey(s string) ([]string, bool) {
	var parts []string
	s = strings.TrimSpace(s)
	for s != "" {
		var part string
		switch s[0] {
		case '"':
			end := 1
			for end < len(s) && (s[end] != '"' || s[end-1] == '\\') {
				end++
			}
			if end == len(s) {
				return nil, false
			}
			u, err := strconv.Unquote(s[:end+1])
			if err != nil {
				return nil, false
			}
			part, s = u, s[end+1:]
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, false
			}
			part, s = s[1:end+1], s[end+2:]
		default:
			end := strings.IndexByte(s, '.')
			if end < 0 {
				end = len(s)
			}
			part, s = strings.TrimSpace(s[:end]), s[end:]
		}
		parts = append(parts, part)
		s = strings.TrimSpace(s)
		s = strings.TrimSpace(strings.TrimPrefix(s, "."))
	}
	return parts, true
}

// snakeCase turns Codex's hook event name into its config key
// ("PreToolUse" → "pre_tool_use").
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Gemini CLI's folder trust levels (trustedFolders.json).
const (
	geminiTrustFolder = "TRUST_FOLDER"
	geminiTrustParent = "TRUST_PARENT"
	geminiDoNotTrust  = "DO_NOT_TRUST"
)

// geminiTrust adds whether Gemini CLI trusts the project folder: it skips
// hooks in a folder it does not trust. The most specific rule in
// ~/.gemini/trustedFolders.json ($GEMINI_CLI_TRUSTED_FOLDERS_PATH) decides;
// a folder trusts its subfolders, TRUST_PARENT trusts the parent.
func (d agentDoctor) geminiTrust(c check) check {
	folder := filepath.Clean(d.project)
	if d.home != "" {
		if s, _, err := loadSettings(filepath.Join(d.home, ".gemini", "settings.json")); err == nil {
			if enabled, ok := lookupPath(s, "security", "folderTrust", "enabled").(bool); ok && !enabled {
				c.msg += "; folder trust is off in Gemini CLI, hooks run everywhere"
				return c
			}
		}
	}
	path := d.e.getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
	if path == "" {
		path = filepath.Join(d.home, ".gemini", "trustedFolders.json")
	}
	var rules map[string]string
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &rules)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.ok, c.msg, c.fix = false, c.msg+"; cannot read "+d.tilde(path)+": "+err.Error(), "fix or remove it, then trust the folder again in gemini (/permissions)"
		return c
	}
	best, level := "", ""
	for p, l := range rules {
		root := filepath.Clean(p)
		if l == geminiTrustParent {
			root = filepath.Dir(root)
		}
		if l == geminiDoNotTrust && root != folder {
			continue
		}
		if within(folder, root) && len(root) > len(best) {
			best, level = root, l
		}
	}
	switch level {
	case geminiTrustFolder, geminiTrustParent:
		c.msg += "; " + d.tilde(folder) + " is a trusted folder"
	case geminiDoNotTrust:
		c.ok, c.msg = false, c.msg+"; "+d.tilde(folder)+" is marked untrusted: Gemini CLI skips hooks there"
		c.fix = "in gemini, run /permissions in " + folder + " and trust it"
	default:
		c.ok, c.msg = false, c.msg+"; "+d.tilde(folder)+" is not trusted yet: Gemini CLI skips hooks there"
		c.fix = "start gemini in " + folder + " and trust the folder (or /permissions); check another folder with --project DIR"
	}
	return c
}

// within reports whether path is root or inside it.
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// tilde shortens a path in the home directory to ~/...
func (d agentDoctor) tilde(p string) string {
	if d.home != "" && within(p, d.home) {
		rel, _ := filepath.Rel(d.home, p)
		return filepath.Join("~", rel)
	}
	return p
}

func (d agentDoctor) tildes(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = d.tilde(p)
	}
	return out
}

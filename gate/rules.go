package gate

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gobwas/glob"
)

// RuleSpec is one rule as written in a rules file: for tools whose name
// matches the Tool glob, a call part matching Pattern gets Action.
// File and Line say where it was written, for explanations and errors.
type RuleSpec struct {
	Tool    string
	Pattern string
	Action  Action
	File    string
	Line    int
}

// PolicySpec is a rules file as loaded, before compilation.
type PolicySpec struct {
	// File names the rules file in messages ("(default rules)" for the
	// embedded one).
	File string
	// Rules is the static layer, in file order (order is meaning: the last
	// matching rule wins).
	Rules []RuleSpec
	// Agents is the agent layer: rules per agent name, in file order.
	Agents map[string][]RuleSpec
	// ToolKinds adds or overrides tool name -> kind (see DefaultToolKinds).
	ToolKinds map[string]ToolKind
	// Protected lists absolute paths (files or directories) no agent may
	// write: the rules file, the data dir, the settings file. Writes there
	// are denied whatever the rules say.
	Protected []string
	// Secrets lists absolute paths (files or directories) no agent may
	// read: the data dir, which holds the approver credential.
	Secrets []string
	// Home is the user's home directory, for `~/` and `$HOME/` in patterns
	// and paths.
	Home string
}

// Policy is a compiled rules file. It is immutable and safe for concurrent
// use; a reload compiles a new one.
type Policy struct {
	// foldCase, when set, replaces the check of whether a file system
	// folds case (tests run where none does).
	foldCase  func(abs string) bool
	file      string
	static    []*rule
	agents    map[string][]*rule
	kinds     map[string]ToolKind
	protected []string
	secrets   []string
	home      string

	// byTool caches, per tool name, the static rules whose tool glob
	// matches it, so each sub-command of a call only matches patterns.
	// The policy never changes once compiled, so entries never go stale.
	byTool  sync.Map // string -> []*rule
	byToolN atomic.Int32

	// history caches the paths in each repository's history (git show).
	history historyCache
}

// maxToolCache bounds byTool: tool names come from agents.
const maxToolCache = 1024

// staticFor returns the static rules that apply to tool, in file order.
func (p *Policy) staticFor(tool string) []*rule {
	if v, ok := p.byTool.Load(tool); ok {
		return v.([]*rule)
	}
	var rs []*rule
	for _, r := range p.static {
		if r.tool.match(tool) {
			rs = append(rs, r)
		}
	}
	if p.byToolN.Load() < maxToolCache {
		if _, loaded := p.byTool.LoadOrStore(tool, rs); !loaded {
			p.byToolN.Add(1)
		}
	}
	return rs
}

// rule is a compiled RuleSpec.
type rule struct {
	tool    matcher
	pattern matcher
	ref     RuleRef
}

// Compile checks and compiles spec. A pattern or tool glob that does not
// compile, an invalid action or kind, or a relative protected path is an
// error naming the file, line and pattern.
func Compile(spec PolicySpec) (*Policy, error) {
	home := ""
	if spec.Home != "" {
		if !filepath.IsAbs(spec.Home) {
			return nil, fmt.Errorf("home directory %q is not absolute", spec.Home)
		}
		home = filepath.Clean(spec.Home)
	}
	p := &Policy{
		file:   spec.File,
		agents: make(map[string][]*rule, len(spec.Agents)),
		kinds:  make(map[string]ToolKind, len(spec.ToolKinds)),
		home:   home,
	}
	var err error
	if p.static, err = compileRules(spec.Rules, LayerStatic, "", home); err != nil {
		return nil, err
	}
	for name, rs := range spec.Agents {
		if p.agents[name], err = compileRules(rs, LayerAgent, name, home); err != nil {
			return nil, err
		}
	}
	for tool, k := range spec.ToolKinds {
		if !k.Valid() {
			return nil, fmt.Errorf("tool %q: unknown kind %q (want shell, read, write or name)", tool, k)
		}
		p.kinds[tool] = k
	}
	for _, pr := range spec.Protected {
		abs, ok := expandHome(pr, home)
		if !ok || !filepath.IsAbs(abs) {
			return nil, fmt.Errorf("protected path %q is not absolute", pr)
		}
		p.protected = append(p.protected, filepath.Clean(abs))
	}
	for _, sec := range spec.Secrets {
		abs, ok := expandHome(sec, home)
		if !ok || !filepath.IsAbs(abs) {
			return nil, fmt.Errorf("secret path %q is not absolute", sec)
		}
		p.secrets = append(p.secrets, filepath.Clean(abs))
	}
	if exe := selfExecutable(); exe != "" {
		p.protected = append(p.protected, exe)
	}
	return p, nil
}

func compileRules(specs []RuleSpec, layer, agent, home string) ([]*rule, error) {
	out := make([]*rule, 0, len(specs))
	for _, s := range specs {
		where := s.File
		if s.Line > 0 {
			where = fmt.Sprintf("%s:%d", s.File, s.Line)
		}
		if agent != "" {
			where += ": agent " + strconv.Quote(agent)
		}
		if !s.Action.Valid() {
			return nil, fmt.Errorf("%s: %s: pattern %q: unknown action %q (want allow, deny or ask)", where, s.Tool, s.Pattern, s.Action)
		}
		tm, err := compileTool(s.Tool)
		if err != nil {
			return nil, fmt.Errorf("%s: bad tool name glob %q: %w", where, s.Tool, err)
		}
		pm, err := compilePattern(s.Pattern, home)
		if err != nil {
			if hint := CompileHint(s.Pattern); hint != "" {
				return nil, fmt.Errorf("%s: %s: bad pattern %q: %w (%s)", where, s.Tool, s.Pattern, err, hint)
			}
			return nil, fmt.Errorf("%s: %s: bad pattern %q: %w", where, s.Tool, s.Pattern, err)
		}
		out = append(out, &rule{
			tool:    tm,
			pattern: pm,
			ref: RuleRef{Layer: layer, File: s.File, Line: s.Line, Tool: s.Tool,
				Pattern: s.Pattern, Action: s.Action},
		})
	}
	return out, nil
}

// File returns the name of the rules file the policy was compiled from.
func (p *Policy) File() string { return p.file }

// Protected returns the paths no agent may write.
func (p *Policy) Protected() []string { return append([]string(nil), p.protected...) }

// Home returns the home directory patterns and paths were expanded with.
func (p *Policy) Home() string { return p.home }

// matcher is a compiled glob with the rules' conventions: no separators,
// and a trailing " *" that also matches nothing (`git log *` matches
// `git log`, not `git logout`).
type matcher struct {
	src     string
	literal bool          // src has no glob syntax: compare strings
	g       *glob.Pattern // nil when literal
	bare    *glob.Pattern // the pattern without its trailing " *", or nil
	// For paths: a pattern without "/" also matches the base name; a pattern
	// starting with "./" matches "./" + the path relative to the call's cwd,
	// and only paths inside it.
	noSlash  bool
	dotSlash bool
}

// compileTool compiles a tool name glob (no trailing " *" convention).
func compileTool(src string) (matcher, error) {
	if src == "" {
		return matcher{}, fmt.Errorf("empty tool name")
	}
	if !hasMeta(src) {
		return matcher{src: src, literal: true}, nil
	}
	g, err := glob.Compile(src)
	if err != nil {
		return matcher{}, err
	}
	return matcher{src: src, g: g}, nil
}

// compilePattern compiles a rule pattern, expanding a leading `~/` or
// `$HOME/` to home.
func compilePattern(src, home string) (matcher, error) {
	if src == "" {
		return matcher{}, fmt.Errorf("empty pattern")
	}
	expanded, ok := expandHomePattern(src, home)
	if !ok {
		return matcher{}, fmt.Errorf("pattern starts with ~ or $HOME but no home directory is known")
	}
	m := matcher{
		src:      expanded,
		noSlash:  !strings.Contains(expanded, "/"),
		dotSlash: strings.HasPrefix(expanded, "./"),
	}
	if !hasMeta(expanded) {
		m.literal = true
		return m, nil
	}
	g, err := glob.Compile(expanded)
	if err != nil {
		return matcher{}, err
	}
	m.g = g
	if bare, ok := strings.CutSuffix(expanded, " *"); ok && !endsInEscape(bare) {
		// When the bare part does not compile on its own (`{a *`), the
		// trailing " *" is not a word wildcard and only the full pattern counts.
		if b, err := glob.Compile(bare); err == nil {
			m.bare = b
		}
	}
	return m, nil
}

// match reports whether s matches the pattern.
func (m *matcher) match(s string) bool {
	if m.literal {
		return s == m.src
	}
	if m.g.Match(s) {
		return true
	}
	return m.bare != nil && m.bare.Match(s)
}

// matchPath matches a path subject: the absolute path, its base name for a
// pattern without "/", its cwd-relative form for a pattern starting "./".
func (m *matcher) matchPath(ps *pathSubject) bool {
	if m.dotSlash {
		return ps.inside && m.match(ps.rel)
	}
	if m.match(ps.abs) {
		return true
	}
	return m.noSlash && m.match(ps.base)
}

// hasMeta reports whether s has gobwas glob syntax.
func hasMeta(s string) bool {
	return strings.ContainsAny(s, `*?[]{}\`)
}

// endsInEscape reports whether s ends with an odd number of backslashes, so
// that the character after it would be escaped.
func endsInEscape(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// expandHomePattern expands `~`, `$HOME` and `${HOME}` where they start a
// word (at the start of the pattern or after a space) and end one (followed
// by "/", a space or the end), quoting home's glob syntax: `~/.ssh/*` and
// `rm -rf ~` both name the home directory, as the shell resolves them. ok is
// false when the pattern needs home and home is unknown.
func expandHomePattern(src, home string) (string, bool) {
	if !strings.Contains(src, "~") && !strings.Contains(src, "HOME") {
		return src, true
	}
	var b strings.Builder
	for i := 0; i < len(src); {
		if i == 0 || src[i-1] == ' ' {
			if n := homeWordLen(src[i:]); n > 0 {
				if home == "" {
					return "", false
				}
				b.WriteString(glob.QuoteMeta(home))
				i += n
				continue
			}
		}
		b.WriteByte(src[i])
		i++
	}
	return b.String(), true
}

// homeWordLen returns the length of a home reference at the start of s that
// ends a word there, or 0.
func homeWordLen(s string) int {
	for _, pre := range [...]string{"~", "$HOME", "${HOME}"} {
		if rest, ok := strings.CutPrefix(s, pre); ok && (rest == "" || rest[0] == '/' || rest[0] == ' ') {
			return len(pre)
		}
	}
	return 0
}

// expandHome expands a leading `~/` or `$HOME/` in a path.
func expandHome(path, home string) (string, bool) {
	rest, ok := homePrefix(path)
	if !ok {
		// `~user/...`: another user's home, if the tool expands it.
		return path, !strings.HasPrefix(path, "~")
	}
	if home == "" {
		return "", false
	}
	return home + rest, true
}

// homePrefix returns what follows a leading `~` or `$HOME` (with its "/"),
// and whether there was one.
func homePrefix(s string) (string, bool) {
	for _, pre := range [...]string{"~", "$HOME", "${HOME}"} {
		if s == pre {
			return "", true
		}
		if rest, ok := strings.CutPrefix(s, pre+"/"); ok {
			return "/" + rest, true
		}
	}
	return "", false
}

// lastMatch returns the last rule of rules that applies to tool and matches
// the subject, or nil. Iterating backwards makes "last match wins" a first match.
func lastMatch(rules []*rule, tool string, subj *subject) *rule {
	for i := len(rules) - 1; i >= 0; i-- {
		r := rules[i]
		if r.tool.match(tool) && r.matches(subj) {
			return r
		}
	}
	return nil
}

// lastPatternMatch is lastMatch for rules already filtered by tool
// (Policy.staticFor).
func lastPatternMatch(rules []*rule, subj *subject) *rule {
	for i := len(rules) - 1; i >= 0; i-- {
		if r := rules[i]; r.matches(subj) {
			return r
		}
	}
	return nil
}

// matches reports whether r's pattern matches the subject.
func (r *rule) matches(subj *subject) bool {
	if subj.path != nil {
		return r.pattern.matchPath(subj.path)
	}
	return r.pattern.match(subj.text)
}

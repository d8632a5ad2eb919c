package gate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gobwas/glob"
)

// LintWarning is one thing a rules file says that it probably does not
// mean, with where and how to fix it.
type LintWarning struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Tool    string `json:"tool"`
	Pattern string `json:"pattern,omitempty"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

func (w LintWarning) String() string {
	where := w.File
	if w.Line > 0 {
		where = fmt.Sprintf("%s:%d", w.File, w.Line)
	}
	return fmt.Sprintf("%s: %s: %s (fix: %s)", where, w.Tool+": "+w.Pattern, w.Message, w.Fix)
}

// nameOnlyTools are tools agents call that are judged by name alone.
var nameOnlyTools = []string{
	"TodoWrite", "TodoRead", "todowrite", "todoread", "update_plan", "ExitPlanMode", "Task", "BashOutput", "KillShell",
	"KillBash", "WebFetch", "WebSearch", "SlashCommand", "Skill", "webfetch", "websearch", "web_fetch", "google_web_search",
	"save_memory", "read_many_files", "view_image", "task", "todo_write", "mcp",
}

// codeRunners are programs an allow rule with a wildcard lets run any code
// (their arguments are a program), or whose every subcommand it allows.
var codeRunners = map[string]string{
	"python": "runs any Python code", "python3": "runs any Python code", "node": "runs any JavaScript",
	"bash": "runs any shell script", "sh": "runs any shell script", "zsh": "runs any shell script",
	"perl": "runs any Perl code", "ruby": "runs any Ruby code", "php": "runs any PHP code",
	"make": "runs any Makefile recipe", "npm": "runs any package script", "npx": "runs any package",
	"pnpm": "runs any package script", "yarn": "runs any package script", "go": "builds and runs any code (go run, go test)",
	"cargo": "builds and runs any code (cargo run, build scripts)", "docker": "runs any container",
	"sudo": "runs anything as root", "eval": "runs any text as code", "source": "runs any script",
	"git":  "allows every git subcommand (push --force, reset --hard, clean -fdx, ...)",
	"curl": "reaches any address and can upload files", "ssh": "runs any command on any host",
	"kubectl": "changes any cluster object", "terraform": "applies any infrastructure change",
}

// Lint reports what a rules file probably does not mean: rules shadowed by
// a later rule, wildcards in the middle of a shell pattern that allow more
// than they seem, allow rules on programs that run arbitrary code, and
// tool names no agent uses. It never changes what the rules do.
func Lint(spec PolicySpec) []LintWarning {
	var out []LintWarning
	known := DefaultToolKinds()
	for t, k := range spec.ToolKinds {
		known[t] = k
	}
	for _, t := range nameOnlyTools {
		if _, ok := known[t]; !ok {
			known[t] = KindName
		}
	}
	kindOf := func(tool string) ToolKind {
		if k, ok := known[tool]; ok {
			return k
		}
		return KindName
	}
	lint := func(rules []RuleSpec) {
		for i, r := range rules {
			w := LintWarning{File: r.File, Line: r.Line, Tool: r.Tool, Pattern: r.Pattern}
			if msg, fix := unknownTool(r.Tool, known); msg != "" {
				w.Message, w.Fix = msg, fix
				out = append(out, w)
			}
			if j := shadowedBy(rules, i); j >= 0 {
				s := rules[j]
				w.Message = fmt.Sprintf("never decides anything: the later rule at line %d (%s: %s) matches everything it matches, and the last match wins", s.Line, s.Tool, s.Pattern)
				w.Fix = "remove it, or move it below line " + fmt.Sprint(s.Line)
				out = append(out, w)
			}
			if r.Action != Allow || !shellTools(r.Tool, kindOf) {
				continue
			}
			if msg, fix := middleWildcard(r.Pattern); msg != "" {
				w.Message, w.Fix = msg, fix
				out = append(out, w)
			}
			if msg, fix := runsAnyCode(r.Pattern); msg != "" {
				w.Message, w.Fix = msg, fix
				out = append(out, w)
			}
		}
	}
	lint(spec.Rules)
	agents := make([]string, 0, len(spec.Agents))
	for a := range spec.Agents {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	for _, a := range agents {
		lint(spec.Agents[a])
	}
	return out
}

// shellTools reports whether a tool glob names a shell tool.
func shellTools(tool string, kindOf func(string) ToolKind) bool {
	if !hasMeta(tool) {
		return kindOf(tool) == KindShell
	}
	g, err := glob.Compile(tool)
	if err != nil {
		return false
	}
	for name, k := range defaultToolKinds {
		if k == KindShell && g.Match(name) {
			return true
		}
	}
	return false
}

// unknownTool reports a tool name (or glob) that matches no tool an agent
// approvalbot knows calls, other than MCP tools and "*".
func unknownTool(tool string, known map[string]ToolKind) (string, string) {
	if tool == "*" || strings.HasPrefix(tool, "mcp__") {
		return "", ""
	}
	if !hasMeta(tool) {
		if _, ok := known[tool]; ok {
			return "", ""
		}
		return "no agent approvalbot knows has a tool named " + tool + ", so this rule never applies",
			"check the spelling (tools are case-sensitive: Bash, Read, Write, Edit, ...), or declare its kind under \"kinds\""
	}
	g, err := glob.Compile(tool)
	if err != nil {
		return "", ""
	}
	for name := range known {
		if g.Match(name) {
			return "", ""
		}
	}
	return "the tool glob " + tool + " matches no tool an agent approvalbot knows calls",
		"check the spelling of the tool names"
}

// shadowedBy returns the index of a later rule for the same tool whose
// pattern matches everything rules[i]'s does, or -1.
func shadowedBy(rules []RuleSpec, i int) int {
	r := rules[i]
	for j := len(rules) - 1; j > i; j-- {
		s := rules[j]
		if s.Tool != r.Tool && s.Tool != "*" {
			continue
		}
		if s.Tool == "*" && r.Tool != "*" {
			continue // "*": an action for any other tool entry, not a pattern rule
		}
		if covers(s.Pattern, r.Pattern) {
			return j
		}
	}
	return -1
}

// covers reports, conservatively, whether every string matching q also
// matches p: p is "*", p equals q, or p is a literal prefix followed by "*"
// (or " *") that q starts with.
func covers(p, q string) bool {
	if p == "*" || p == q {
		return true
	}
	prefix, ok := strings.CutSuffix(p, "*")
	if !ok || hasMeta(prefix) {
		return false
	}
	if bare, ok := strings.CutSuffix(p, " *"); ok && q == bare {
		return true
	}
	return strings.HasPrefix(q, prefix) && !hasMeta(q[:min(len(q), len(prefix))])
}

// middleWildcard reports a `*` between words of a shell pattern: it spans
// any words, options included (`git * main` allows `git push --force main`).
func middleWildcard(p string) (string, string) {
	i := strings.IndexByte(p, '*')
	if i < 0 || i == len(p)-1 || p == "*" {
		return "", ""
	}
	rest := p[i+1:]
	if strings.TrimSpace(rest) == "" {
		return "", ""
	}
	example := strings.Replace(p, "*", "--force --any-option", 1)
	example = strings.ReplaceAll(example, "*", "x")
	return "the `*` in the middle spans any words, options included: it also allows `" + example + "`",
		"list the exact commands, or end the pattern with ` *`"
}

// runsAnyCode reports an allow pattern that lets a program run any code.
func runsAnyCode(p string) (string, string) {
	name, rest, _ := strings.Cut(p, " ")
	why, ok := codeRunners[name]
	if !ok {
		return "", ""
	}
	switch rest {
	case "*", "run *", "exec *", "dlx *", "x *":
	default:
		if p != name+"*" {
			return "", "" // one subcommand (`git log *`, `npm test *`)
		}
	}
	return "`" + p + "` " + why,
		"allow the specific commands you mean (`" + name + " SUBCOMMAND *`, an exact script), and let the rest ask"
}

// CompileHint explains a pattern that does not compile, when it is a known
// trap: gobwas reads "[" as a character class, so a rule for the `[`
// command must escape it.
func CompileHint(pattern string) string {
	if strings.Contains(pattern, "[") && !strings.Contains(pattern, "]") {
		return "`[` starts a character class in a pattern; for the `[` command write `\\\\[ *` in the JSON file"
	}
	return ""
}

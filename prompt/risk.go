package prompt

import (
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"approvalbot/gate"
)

// Risk labels: short phrases built from the gate's analysis (never from a
// model), shown on every prompt so the dangerous part of a call is seen at
// a glance. See DESIGN.md, "Risk at a glance".
const (
	RiskDownloadedCode = "runs code downloaded from the network"
	RiskForcePush      = "force-pushes"
	RiskRecursive      = "deletes recursively"
	RiskWritesOutside  = "writes outside the project"
	RiskReadsOutside   = "reads outside the project"
	RiskNetwork        = "network access"
	RiskRoot           = "as root"
	riskNotUnderstood  = "not understood: "
	riskHazard         = "hazard: "
)

// Programs by what they do, for the labels. Keep them short and positive:
// a label is a hint on top of the rules, not a decision.
var (
	downloaders  = set("curl", "wget", "fetch", "aria2c", "http", "https", "xh")
	interpreters = set("sh", "bash", "zsh", "dash", "ksh", "fish", "source", ".", "eval",
		"python", "python2", "python3", "perl", "ruby", "node", "deno", "bun", "php", "pwsh", "powershell")
	networkTools = set("ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp", "socat",
		"gh", "aws", "gcloud", "az", "kubectl", "ping", "dig", "nslookup")
	// networkSubcommands are the sub-commands of programs that go online.
	networkSubcommands = map[string]map[string]bool{
		"git":     set("push", "pull", "fetch", "clone", "ls-remote", "submodule"),
		"npm":     set("install", "i", "ci", "add", "publish", "update", "exec"),
		"npx":     nil,
		"pnpm":    set("install", "i", "add", "publish", "update", "dlx"),
		"yarn":    set("install", "add", "publish", "up", "dlx"),
		"pip":     set("install", "download"),
		"pip3":    set("install", "download"),
		"go":      set("get", "install", "mod"),
		"cargo":   set("install", "add", "publish", "update", "fetch"),
		"docker":  set("pull", "push", "login", "run", "build"),
		"brew":    set("install", "upgrade", "update"),
		"apt":     set("install", "update", "upgrade"),
		"apt-get": set("install", "update", "upgrade"),
	}
	rootWrappers = set("sudo", "doas", "su", "pkexec", "run0")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Risks returns a's risk labels, most serious first, without repeats.
func Risks(a *gate.Approval) []string {
	e := a.Evaluation
	var out []string
	seen := map[string]bool{}
	add := func(label string) {
		if label != "" && !seen[label] {
			seen[label] = true
			out = append(out, VisibleLine(label))
		}
	}
	if e.Uncertain {
		for _, l := range uncertainLabels(e) {
			add(l)
		}
	}
	var downloads, runsCode, network bool
	for _, v := range e.Commands {
		switch v.Kind {
		case "network":
			network = true
			continue
		case "command":
		default:
			continue
		}
		argv := strings.Fields(strings.ReplaceAll(v.Subject, "\x00", "…"))
		if len(argv) == 0 {
			continue
		}
		prog := path.Base(argv[0])
		args := argv[1:]
		switch {
		case rootWrappers[v.Wrapper] || rootWrappers[prog]:
			add(RiskRoot)
		}
		if downloaders[prog] {
			downloads, network = true, true
		}
		if interpreters[prog] {
			runsCode = true
		}
		if networkTools[prog] {
			network = true
		}
		if subs, ok := networkSubcommands[prog]; ok {
			if sub := firstOperand(args); subs == nil || subs[sub] {
				network = true
			}
		}
		if prog == "git" && firstOperand(args) == "push" && forcePush(args) {
			add(RiskForcePush)
		}
		if recursiveDelete(prog, args) {
			add(RiskRecursive)
		}
	}
	if downloads && runsCode {
		add(RiskDownloadedCode)
	}
	if e.OutsideProject {
		if writesOutside(a) {
			add(RiskWritesOutside)
		} else {
			add(RiskReadsOutside)
		}
	}
	if network && !seen[RiskDownloadedCode] {
		add(RiskNetwork)
	}
	return out
}

// cleanReason drops the prefixes a verdict's reason repeats ("ask: ",
// "not understood: ").
func cleanReason(s string) string {
	for {
		t := strings.TrimPrefix(strings.TrimPrefix(s, "ask: "), riskNotUnderstood)
		if t == s {
			return s
		}
		s = t
	}
}

// uncertainLabels say why the analysis could not clear the call: what it
// did not understand, or the hazard it found, from the verdicts' reasons.
func uncertainLabels(e gate.Evaluation) []string {
	var out []string
	for _, v := range e.Commands {
		if v.Decision != gate.Ask && v.Decision != gate.Deny {
			continue
		}
		switch {
		case v.Hazard != "":
			out = append(out, riskHazard+v.Hazard)
		case v.Dynamic != "":
			out = append(out, riskNotUnderstood+cleanReason(v.Dynamic))
		case v.Rule != nil && v.Rule.Layer == gate.LayerShell:
			out = append(out, riskNotUnderstood+cleanReason(v.Reason))
		}
	}
	if len(out) == 0 {
		reason := e.Reason
		if _, after, ok := strings.Cut(reason, riskNotUnderstood); ok {
			reason = after
		}
		out = append(out, riskNotUnderstood+cleanReason(reason))
	}
	return out
}

// firstOperand is the first argument that is not an option (a sub-command).
func firstOperand(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

func forcePush(args []string) bool {
	for _, a := range args {
		switch {
		case a == "-f", a == "--force", strings.HasPrefix(a, "--force-with-lease"), a == "--force-if-includes", a == "--mirror":
			return true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "f"):
			return true // -fu, -uf
		case strings.HasPrefix(a, "+") && len(a) > 1:
			return true // +refspec
		}
	}
	return false
}

func recursiveDelete(prog string, args []string) bool {
	switch prog {
	case "rm":
		for _, a := range args {
			if a == "--" {
				return false
			}
			if a == "--recursive" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rR")) {
				return true
			}
		}
	case "find":
		for _, a := range args {
			if a == "-delete" {
				return true
			}
		}
	case "rmdir":
		for _, a := range args {
			if a == "-p" || a == "--parents" {
				return true
			}
		}
	}
	return false
}

// writesOutside reports whether a writes to a path outside its cwd: a
// write tool's call, or a shell line's redirect write.
func writesOutside(a *gate.Approval) bool {
	if a.Evaluation.Kind == gate.KindWrite || (a.Judged != nil && a.Judged.Kind == gate.KindWrite) {
		return true
	}
	for _, v := range a.Evaluation.Commands {
		if v.Kind == "write" && !inside(v.Subject, a.Cwd) {
			return true
		}
	}
	return false
}

func inside(p, dir string) bool {
	if dir == "" || !filepath.IsAbs(p) {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// MaxAskedByPattern is the longest rule pattern AskedBy shows, in runes.
const MaxAskedByPattern = 60

// AskedBy names, briefly, what made the gate ask: the rule by file and line
// (`rules.jsonc:14 Bash: *`), the analysis, the built-in protection, or
// that nothing matched. tool is the call's tool, shown for a rule whose
// tool is a pattern (the default rules' long brace lists). It never
// quotes the call (the evaluation's reason repeats the sub-command that
// asked), and a long pattern is cut to MaxAskedByPattern characters, so
// the line stays short whatever the rules file or the agent holds.
func AskedBy(e gate.Evaluation, tool string) string {
	r := e.Rule
	if r == nil {
		return ""
	}
	switch r.Layer {
	case gate.LayerShell:
		return "the shell analysis"
	case gate.LayerBuiltin:
		return "built-in protection"
	case gate.LayerDefault:
		return "no rule matched (ask)"
	case gate.LayerMode:
		return "the agent's mode"
	}
	name := r.Tool
	if name == "" || strings.ContainsAny(name, "{*?[") {
		name = tool
	}
	var b strings.Builder
	if r.File != "" {
		b.WriteString(strings.Trim(filepath.Base(r.File), "()"))
		if r.Line > 0 {
			b.WriteString(":" + strconv.Itoa(r.Line))
		}
		b.WriteString(" ")
	}
	switch r.Layer {
	case gate.LayerAgent:
		b.WriteString("agent rule ")
	case gate.LayerAlways:
		b.WriteString("Always rule ")
	}
	b.WriteString(name)
	if r.Pattern != "" {
		p := r.Pattern
		if utf8.RuneCountInString(p) > MaxAskedByPattern {
			p = firstRunes(p, MaxAskedByPattern-1) + "…"
		}
		b.WriteString(": " + p)
	}
	return VisibleLine(b.String())
}

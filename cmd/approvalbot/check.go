package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"approvalbot/config"
	"approvalbot/gate"
	"approvalbot/shell"
)

const checkUsage = `usage: approvalbot check [--rules FILE] [--agent NAME] [--cwd DIR] [--tool NAME]
                         [--mode MODE] [--json] -- COMMAND...
       approvalbot check --tool NAME --input JSON [flags]

Evaluates one call offline against the rules and explains the decision.
A shell tool (default Bash) takes the command line after "--" (several
words are joined by spaces, as ssh does); other tools take --input.
The rules are --rules FILE, else $APPROVALBOT_RULES, else the defaults.
Exit status 0 whatever the decision; 2 for bad arguments or a bad rules file.
`

// checkOutput is the --json answer: the evaluation and what it was about.
type checkOutput struct {
	Tool      string `json:"tool"`
	Agent     string `json:"agent,omitempty"`
	Cwd       string `json:"cwd"`
	RulesFile string `json:"rules_file"`
	gate.Evaluation
}

func runCheck(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		rulesPath = fs.String("rules", "", "rules file (default $APPROVALBOT_RULES, else the built-in defaults)")
		agent     = fs.String("agent", "", "agent name (for per-agent rules)")
		cwd       = fs.String("cwd", "", "the call's working directory (default the current directory)")
		tool      = fs.String("tool", "Bash", "tool name")
		inputJSON = fs.String("input", "", "tool input as a JSON object")
		mode      = fs.String("mode", "", "approval mode: interactive, strict or approve_all")
		asJSON    = fs.Bool("json", false, "print one JSON object")
	)
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "approvalbot check: "+format+"\n", a...)
		fmt.Fprint(e.stderr, checkUsage)
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, checkUsage)
			return exitOK
		}
		return usageErr("%v", err)
	}
	m := gate.Mode(*mode)
	if m != "" && !m.Valid() {
		return usageErr("unknown mode %q (want interactive, strict or approve_all)", *mode)
	}
	if *tool == "" {
		return usageErr("--tool must not be empty")
	}

	home := e.getenv("HOME")
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = h
		}
	}
	policy, rulesName, warnings, err := checkPolicy(e, *rulesPath, home)
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot check: %v\n", err)
		return exitUsage
	}
	// What the rules file probably does not mean goes to stderr, so the
	// decision on stdout stays one answer.
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}

	dir := *cwd
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return usageErr("cannot find the current directory (pass --cwd): %v", err)
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return usageErr("--cwd %q: %v", *cwd, err)
	}

	kind := policy.Kind(*tool)
	command := strings.Join(fs.Args(), " ")
	var input json.RawMessage
	switch {
	case *inputJSON != "" && command != "":
		return usageErr("give either --input or a command after --, not both")
	case *inputJSON != "":
		var obj map[string]any
		if err := json.Unmarshal([]byte(*inputJSON), &obj); err != nil || obj == nil {
			return usageErr("--input is not a JSON object: %v", errOr(err, "null"))
		}
		input = json.RawMessage(*inputJSON)
	case command != "":
		if kind != gate.KindShell {
			return usageErr("%s is a %s tool: give its input with --input '{...}'", *tool, kind)
		}
		input, _ = json.Marshal(map[string]string{"command": command})
	default:
		return usageErr("nothing to check: give a command after -- or --input")
	}

	call := gate.Call{Agent: *agent, SessionID: "check", Tool: *tool, Input: input, Cwd: dir}
	ev := policy.Evaluate(call, gate.Env{Mode: m})
	if ev.Commands == nil {
		ev.Commands = []gate.Verdict{}
	}
	if ev.Always == nil {
		ev.Always = []string{}
	}
	if ev.AlwaysRules == nil {
		ev.AlwaysRules = []gate.AlwaysPattern{}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(checkOutput{Tool: *tool, Agent: *agent, Cwd: dir, RulesFile: rulesName, Evaluation: ev}); err != nil {
			fmt.Fprintf(e.stderr, "approvalbot check: write output: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	printCheck(e.stdout, ev)
	return exitOK
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// checkPolicy loads the rules check uses: --rules alone, else
// APPROVALBOT_RULES alone, else the embedded defaults (never merged). The
// protected paths are those serve would use.
func checkPolicy(e *env, rulesPath, home string) (*gate.Policy, string, []gate.LintWarning, error) {
	spec, rulesPath, name, err := rulesSpec(e, rulesPath, home)
	if err != nil {
		return nil, "", nil, err
	}
	warnings := gate.Lint(spec)
	s := config.Settings{Rules: rulesPath, DataDir: e.getenv(config.Prefix + "_DATA_DIR")}
	if s.DataDir == "" && home != "" {
		s.DataDir = filepath.Join(home, ".local", "share", "approvalbot")
	}
	if s.DataDir != "" {
		if abs, aerr := filepath.Abs(s.DataDir); aerr == nil {
			s.DataDir = abs
		}
	}
	if extra := e.getenv(config.Prefix + "_PROTECT"); extra != "" {
		s.Protect = strings.Split(extra, ",")
	}
	for _, p := range protectedPaths(s, home) {
		if p != "" {
			spec.Protected = append(spec.Protected, p)
		}
	}
	if s.DataDir != "" {
		spec.Secrets = append(spec.Secrets, s.DataDir)
	}
	spec.Home = home
	p, err := gate.Compile(spec)
	if err != nil {
		return nil, "", nil, err
	}
	return p, name, warnings, nil
}

// rulesSpec loads the rules file at rulesPath, else $APPROVALBOT_RULES,
// else the embedded defaults; it returns the spec, the file's absolute
// path ("" for the defaults) and its name in messages.
func rulesSpec(e *env, rulesPath, home string) (gate.PolicySpec, string, string, error) {
	if rulesPath == "" {
		rulesPath = e.getenv(config.Prefix + "_RULES")
	}
	if rulesPath == "" {
		spec, err := config.ParseRules(config.DefaultRulesName, config.DefaultRules(), home)
		return spec, "", config.DefaultRulesName, err
	}
	if abs, err := filepath.Abs(rulesPath); err == nil {
		rulesPath = abs
	}
	spec, err := config.LoadRules(rulesPath, home)
	return spec, rulesPath, rulesPath, err
}

// printCheck writes the human explanation of an evaluation.
func printCheck(w io.Writer, ev gate.Evaluation) {
	fmt.Fprintf(w, "decision: %s\n", ev.Decision)
	fmt.Fprintf(w, "reason:   %s\n", display(ev.Reason))
	if ev.Uncertain && ev.Decision == gate.Ask {
		fmt.Fprintln(w, "only a person can answer this ask: no rule, Always rule or approve_all mode does")
	}
	for _, v := range ev.Commands {
		// The reason names the rule (file:line and pattern).
		fmt.Fprintf(w, "  %-5s %-7s %s\n                %s\n", v.Decision, v.Kind, display(v.Subject), display(v.Reason))
	}
	if ev.OutsideProject {
		paths := make([]string, 0, len(ev.OutsidePaths))
		for _, p := range ev.OutsidePaths {
			paths = append(paths, display(p))
		}
		fmt.Fprintf(w, "warning: outside the project: %s\n", strings.Join(paths, ", "))
	}
	switch {
	case len(ev.AlwaysRules) > 0:
		parts := make([]string, 0, len(ev.AlwaysRules))
		for _, ap := range ev.AlwaysRules {
			parts = append(parts, display(ap.Tool)+": "+display(ap.Pattern))
		}
		fmt.Fprintf(w, "always would save: %s\n", strings.Join(parts, ", "))
	case ev.Decision == gate.Ask:
		fmt.Fprintln(w, "always: no safe pattern; the Always button would approve once")
	}
}

// display makes agent text safe for a terminal: run-time parts show as "…",
// control, invisible and bidi characters as escapes.
func display(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case string(r) == shell.Dyn:
			b.WriteString("…")
		case r == unicode.ReplacementChar || !unicode.IsGraphic(r) || unicode.Is(unicode.Bidi_Control, r) || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

package main

import (
	"context"
	"fmt"
	"os"

	"approvalbot/gate"
)

const lintUsage = `rules lint [FILE] [--json]

Reports what a rules file probably does not mean: rules that never decide
anything because a later rule matches everything they match, wildcards in
the middle of a shell pattern (git * main also allows git push --force
main), allow rules that let a program run any code (python *, git *), and
tool names no agent uses. FILE defaults to $APPROVALBOT_RULES, else the
embedded defaults. Exit 0 when clean, 1 with warnings, 2 for a file that
does not load.`

// rulesLint is `approvalbot rules lint [FILE]`.
func rulesLint(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "rules lint", lintUsage)
	asJSON := fs.Bool("json", false, "print the warnings as JSON")
	rest, code, ok := parseFlags(e, fs, args, -1)
	if !ok {
		return code
	}
	if len(rest) > 1 {
		fmt.Fprintf(e.stderr, "usage: approvalbot %s\n", lintUsage)
		return exitUsage
	}
	file := ""
	if len(rest) == 1 {
		file = rest[0]
	}
	home := e.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	spec, _, name, err := rulesSpec(e, file, home)
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot rules lint: %v\n", err)
		return exitUsage
	}
	warnings := gate.Lint(spec)
	if *asJSON {
		if warnings == nil {
			warnings = []gate.LintWarning{}
		}
		if err := printJSON(e, warnings); err != nil {
			return exitFailure
		}
	} else {
		for _, w := range warnings {
			fmt.Fprintln(e.stdout, w)
		}
		if len(warnings) == 0 {
			fmt.Fprintf(e.stdout, "%s: no warnings\n", name)
		}
	}
	if len(warnings) > 0 {
		return exitFailure
	}
	return exitOK
}

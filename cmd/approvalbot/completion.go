package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// runCompletion prints a completion script for bash, zsh or fish, listing
// the subcommands and the agents `hook` takes.
func runCompletion(ctx context.Context, e *env, args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(e.stdout, `usage: approvalbot completion bash|zsh|fish

Prints a completion script. For example:
  bash: approvalbot completion bash > ~/.local/share/bash-completion/completions/approvalbot
  zsh:  approvalbot completion zsh > "${fpath[1]}/_approvalbot"
  fish: approvalbot completion fish > ~/.config/fish/completions/approvalbot.fish
`)
		return exitOK
	}
	if len(args) != 1 {
		fmt.Fprintln(e.stderr, "usage: approvalbot completion bash|zsh|fish")
		return exitUsage
	}
	cmds := commands()
	names := make([]string, 0, len(cmds)+1)
	for n := range cmds {
		names = append(names, n)
	}
	names = append(names, "help")
	sort.Strings(names)
	words := strings.Join(names, " ")
	const hooks = "claude codex"
	switch args[0] {
	case "bash":
		fmt.Fprintf(e.stdout, `# bash completion for approvalbot
_approvalbot() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
  elif [ "${COMP_WORDS[1]}" = hook ] && [ "$COMP_CWORD" -eq 2 ]; then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
  elif [ "${COMP_WORDS[1]}" = help ] && [ "$COMP_CWORD" -eq 2 ]; then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
  fi
}
complete -F _approvalbot approvalbot
`, words, hooks, words)
	case "zsh":
		fmt.Fprintf(e.stdout, `#compdef approvalbot
_approvalbot() {
  if (( CURRENT == 2 )); then
    compadd -- %s
  elif [[ ${words[2]} == hook && CURRENT == 3 ]]; then
    compadd -- %s
  elif [[ ${words[2]} == help && CURRENT == 3 ]]; then
    compadd -- %s
  fi
}
compdef _approvalbot approvalbot
`, words, hooks, words)
	case "fish":
		fmt.Fprintf(e.stdout, "# fish completion for approvalbot\ncomplete -c approvalbot -f\n")
		for _, n := range names {
			summary := "show help for a command"
			if c, ok := cmds[n]; ok {
				summary = c.summary
			}
			fmt.Fprintf(e.stdout, "complete -c approvalbot -n __fish_use_subcommand -a %s -d %s\n", n, fishQuote(summary))
		}
		fmt.Fprintf(e.stdout, "complete -c approvalbot -n '__fish_seen_subcommand_from hook' -a '%s'\n", hooks)
	default:
		fmt.Fprintf(e.stderr, "approvalbot completion: unknown shell %q (want bash, zsh or fish)\n", args[0])
		return exitUsage
	}
	return exitOK
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

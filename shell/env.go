package shell

// Which shell and environment variables a line may set.

import (
	"strings"
)

// assignable says why setting the shell or environment variable name is
// not understood, "" when it is harmless. Bash's own variables and those
// that change how programs behave are asked about; the list of names that
// may be set is positive for upper-case names, so an unknown one asks.
func assignable(name string, exported bool) string {
	if !validName(name) {
		return "to `" + name + "`, which is not a plain variable name"
	}
	if strings.HasPrefix(name, "BASH") || shellVars[name] {
		return "to " + name + ", which changes how the shell runs commands"
	}
	lower := false
	for i := 0; i < len(name); i++ {
		if name[i] >= 'a' && name[i] <= 'z' {
			lower = true
			break
		}
	}
	if lower {
		l := strings.ToLower(name)
		if strings.Contains(l, "proxy") || strings.HasPrefix(l, "npm_config_") || l == "histchars" ||
			l == "auto_resume" || strings.HasPrefix(l, "yarn_") || strings.HasPrefix(l, "pnpm_") {
			return "to " + name + ", which changes how programs behave"
		}
		if zshSpecial[name] || strings.HasPrefix(name, "dis_") {
			// An agent's shell may be zsh (Claude Code on macOS).
			return "to " + name + ", which zsh reads as its own (functions, commands, path, options, ...)"
		}
		return ""
	}
	if safeEnv[name] || strings.HasPrefix(name, "LC_") {
		return ""
	}
	return "to " + name + ", which may change how programs behave"
}

// zshSpecial are zsh's lower-case special parameters (zshparam, the
// zsh/parameter module): assigned, they define functions (functions),
// map names to programs (commands, builtins), change the search paths
// (path, cdpath, fpath, module_path, manpath), options (options), aliases
// and named directories.
var zshSpecial = map[string]bool{
	"path": true, "cdpath": true, "fpath": true, "module_path": true, "manpath": true, "mailpath": true,
	"functions": true, "functions_source": true, "commands": true, "builtins": true, "options": true,
	"aliases": true, "galiases": true, "saliases": true, "nameddirs": true, "userdirs": true, "parameters": true,
	"modules": true, "reswords": true, "history": true, "historywords": true, "jobdirs": true, "jobstates": true,
	"jobtexts": true, "widgets": true, "keymaps": true, "psvar": true, "watch": true, "fignore": true,
	"prompt": true, "precmd_functions": true, "preexec_functions": true, "chpwd_functions": true,
	"periodic_functions": true, "zshaddhistory_functions": true, "zshexit_functions": true, "signals": true,
	"dirstack": true, "argv": true, "status": true, "pipestatus": true, "zsh_eval_context": true, "epochtime": true,
}

// shellVars are bash's own variables that change what runs or where.
var shellVars = map[string]bool{
	"IFS": true, "PATH": true, "HOME": true, "ENV": true, "CDPATH": true, "PS0": true, "PS1": true, "PS2": true,
	"PS3": true, "PS4": true, "PROMPT_COMMAND": true, "SHELLOPTS": true, "GLOBIGNORE": true, "OLDPWD": true,
	"PWD": true, "HISTFILE": true, "HISTCONTROL": true, "INPUTRC": true, "FUNCNEST": true, "TMOUT": true,
	"MAIL": true, "MAILPATH": true, "OPTIND": true, "OPTARG": true, "POSIXLY_CORRECT": true, "EXECIGNORE": true,
	"GLOBSORT": true, "TIMEFORMAT": true, "COMP_WORDBREAKS": true, "HOSTFILE": true, "SHELL": true,
}

// safeEnv are upper-case names that may be set: they tune output, builds
// and tests, and run nothing. (Not COLUMNS or LINES: zsh evaluates what
// they are given as arithmetic, where a subscript runs $(...).)
var safeEnv = map[string]bool{
	"CI": true, "DEBUG": true, "VERBOSE": true, "QUIET": true, "NODE_ENV": true, "RAILS_ENV": true, "RACK_ENV": true,
	"APP_ENV": true, "FLASK_ENV": true, "FLASK_DEBUG": true, "GOOS": true, "GOARCH": true, "GOARM": true,
	"GOAMD64": true, "CGO_ENABLED": true, "GO111MODULE": true, "GOMAXPROCS": true, "GOTRACEBACK": true, "GOGC": true,
	"GOMEMLIMIT": true, "RUST_BACKTRACE": true, "RUST_LOG": true, "RUST_TEST_THREADS": true, "CARGO_TERM_COLOR": true,
	"CARGO_INCREMENTAL": true, "LOG_LEVEL": true, "LOGLEVEL": true, "LANG": true, "LANGUAGE": true, "TZ": true,
	"TERM": true, "NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true,
	"PORT": true, "PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true, "PYTHONHASHSEED": true,
	"PYTHONIOENCODING": true, "PYTHONUTF8": true, "NODE_NO_WARNINGS": true, "GIT_AUTHOR_NAME": true,
	"GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true, "GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true,
	"GIT_COMMITTER_DATE": true, "GIT_TERMINAL_PROMPT": true, "GIT_OPTIONAL_LOCKS": true, "HUSKY": true,
	"DIR": true, "FILE": true, "FILES": true, "OUT": true, "N": true, "I": true, "COUNT": true, "NAME": true,
	"VERSION": true, "TAG": true, "BRANCH": true, "MSG": true, "TIMEOUT": true,
}

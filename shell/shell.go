// Package shell decomposes a shell command line into the simple commands it
// would run, so that rules are matched per command and never against the raw
// string. It parses with mvdan.cc/sh/v3 and fails closed: whatever it cannot
// understand is reported so the gate asks.
package shell

// Dyn stands for a part of a word that is only known at run time ($X, $(...),
// an unquoted glob, ...) in Command.Argv and Command.Text. It is a NUL byte,
// which Analyze rejects in input, so it cannot be forged by the command, and a
// glob can match it only with a wildcard: `curl *` matches `curl <Dyn>`,
// `curl https://ok/*` does not.
const Dyn = "\x00"

// Options tune an analysis.
type Options struct {
	// Cwd is the directory the command runs in, for outside-project detection
	// and for resolving redirect targets. May be empty (then nothing relative
	// is flagged).
	Cwd string
	// Home is the user's home directory, for `~` and $HOME.
	Home string
}

// Analysis is what a command line would do.
type Analysis struct {
	// Commands holds every simple command anywhere in the tree (pipelines,
	// lists, subshells, substitutions, ... and the inner commands of
	// wrappers, which appear after their wrapper), in source order.
	Commands []Command
	// Writes holds every redirection that writes a file (>, >>, >|, &>, <>),
	// except to /dev/null, /dev/stdout, /dev/stderr and fd duplications.
	Writes []Write
	// Unsafe, when not empty, says why the whole line must ask however the
	// commands match: a parse error, a control character, invisible or bidi
	// Unicode, ...
	Unsafe string
	// OutsideProject is true when a path argument or redirect target lies
	// outside Options.Cwd (absolute elsewhere, `..`, `~`).
	OutsideProject bool
	// OutsidePaths lists those paths, as written.
	OutsidePaths []string
}

// Command is one simple command.
type Command struct {
	// Argv is the command's words after literal resolution (quotes removed,
	// escapes and brace expansion resolved); parts known only at run time
	// are Dyn.
	Argv []string
	// Text is Argv re-quoted (single quotes unless a word is made only of [A-Za-z0-9_@%+=:,./{}-]) and joined by
	// spaces: the string rules are matched against.
	Text string
	// AltTexts are other spellings of the same command (argv0's base name
	// for `/bin/rm`, git with its global options such as -C stripped, ...).
	// The gate lets them deny, never allow.
	AltTexts []string
	// Source is the command as written in the input, for display.
	Source string
	// Dynamic, when not empty, says why the command name (or a wrapper's
	// payload) is not static: the gate must ask.
	Dynamic string
	// Hazard, when not empty, names the hazard (find -delete, sed -i, ...)
	// that turns an allow into an ask.
	Hazard string
	// Wrapper names the wrapper this command was unwrapped from (sudo, env,
	// bash -c, find -exec, ...), empty at top level.
	Wrapper string
	// Always is the pattern the Always button saves for this command, ""
	// when no safe pattern exists (a wrapper itself, dynamic parts, ...).
	Always string
}

// Write is a redirection that writes a file.
type Write struct {
	Op      string // ">", ">>", ">|", "&>", "&>>", "<>"
	Path    string // the target as resolved (Dyn for dynamic parts)
	Dynamic bool   // the target is not static
}

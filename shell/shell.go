// Package shell decomposes a shell command line into the simple commands it
// would run, so that rules are matched per command and never against the raw
// string. It parses with mvdan.cc/sh/v3 and models a subset of bash exactly:
// what it does not fully understand is reported, so the gate asks.
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
	// and for resolving relative paths. May be empty (then relative paths are
	// unknown).
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
	// Reads holds the files the line reads: input redirections and the file
	// operands of programs known to read them (cat, grep, sort, ...).
	Reads []Read
	// Network lists /dev/tcp and /dev/udp redirections (host/port as
	// written, Dyn for run-time parts): bash opens a socket for them.
	Network []string
	// Unsafe, when not empty, says why the whole line must ask however the
	// commands match: a parse error, a control character, invisible or bidi
	// Unicode, a shell feature the analyzer does not model, ...
	Unsafe string
	// OutsideProject is true when a path argument or redirect target lies
	// outside Options.Cwd (absolute elsewhere, `..`, `~`).
	OutsideProject bool
	// OutsidePaths lists those paths, as written.
	OutsidePaths []string
}

// Command is one simple command.
type Command struct {
	// Argv is the command's words after expansion as far as it is known
	// statically (quotes removed, escapes, brace expansion and variables
	// assigned earlier in the line resolved); parts known only at run time
	// are Dyn.
	Argv []string
	// Globs marks, per word of Argv, an unquoted word that bash may turn
	// into zero or more words: a pathname pattern (file names) or a
	// run-time part (split on blanks, dropped when empty). nil when none.
	Globs []bool
	// Via holds the argv of transparent wrappers (timeout, nice, env,
	// command, ...) this command was reached through, outermost first: they
	// run too, and are judged through this command.
	Via [][]string
	// Text is Argv re-quoted (single quotes unless a word is made only of
	// [A-Za-z0-9_@%+=:,./{}-]) and joined by spaces: the string rules are
	// matched against.
	Text string
	// Canon, when not empty, is Text without options that change nothing
	// a rule cares about (git's --no-pager, -P, -C DIR): rules may allow
	// or deny the command through it.
	Canon string
	// AltTexts are other spellings of the same command (argv0's base name
	// for `/bin/rm`, git with its global options such as -C stripped, ...).
	// The gate lets them deny, never allow.
	AltTexts []string
	// Source is the command as written in the input, for display.
	Source string
	// Cwd is the directory the command runs in as far as the line shows
	// (after `cd`, `pushd`, ...); "" when it is not known.
	Cwd string
	// Dynamic, when not empty, says what about the command is not
	// understood (a name only known at run time, an unknown option, a
	// dynamic word where an option may be, ...): the gate must ask, and no
	// rule, Always rule or mode can allow it.
	Dynamic string
	// Hazard, when not empty, names what the command can do beyond what a
	// rule for its text suggests (find -delete, sed -i, ...): it turns an
	// allow into an ask that no rule, Always rule or mode can lift.
	Hazard string
	// Unmodeled says the analysis has no table for the program: which of
	// its arguments it reads as files is not known.
	Unmodeled bool
	// Patterns holds, for an Unmodeled command, the pathname pattern of
	// each word of Argv that is one (absolute when the directory is
	// known), "" for the others; nil when none.
	Patterns []string
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
	Path    string // the target, absolute when it is known (Dyn for dynamic parts)
	Dynamic bool   // the target is not static (or relative to an unknown directory)
	// IntoDir, when set, says the write happens only if IntoDir is a
	// directory (cp SRC DEST writes DEST/SRC when DEST is one).
	IntoDir string
}

// Read is a file the line reads.
type Read struct {
	// Path is the file, absolute when the directory is known; with Pattern
	// it is a glob (`*` and `?` never match a leading dot of a name; `*` in
	// a Recursive read also crosses `/`).
	Path string
	// Pattern says Path is a pathname pattern rather than one file.
	Pattern bool
	// Recursive says every file below Path is read (grep -r, rg).
	Recursive bool
	// SkipHidden, for a Recursive read, leaves out names starting with "."
	// (ripgrep's default, which agents' own search tools use).
	SkipHidden bool
	// FollowLinks, for a Recursive read, says symbolic links met below the
	// directory are followed (grep -R, rg -L).
	FollowLinks bool
	// Include, for a Recursive read, lists the file name patterns that are
	// read (grep --include, rg -g); nil means every file.
	Include []string
	// OptionRisk says a Pattern read is an operand of a program with
	// options that read or recurse: a name starting with "-" would be one.
	OptionRisk bool
	// Dynamic says the file is only known at run time (Path may hold Dyn).
	Dynamic bool
	// Tracked, for a Recursive read, says only the files git tracks are
	// read, from the work tree (git grep, git diff).
	Tracked bool
	// Addable, for a Recursive read, says only the files `git add` would
	// stage are read: tracked ones, and untracked ones .gitignore does not
	// ignore.
	Addable bool
	// RgIgnore, for a Recursive read, says ripgrep's ignore rules leave
	// files out (.gitignore in a repository; .ignore, .rgignore).
	RgIgnore bool
	// History says files are printed from the git repository whose work
	// tree holds Path, as committed (`git show COMMIT`, `git log -p`,
	// `git diff REV`): every file in its history counts as read.
	History bool
	// Revisions, for a History read of git diff or git grep, are its
	// operands that may be revisions or files: when every one is a file
	// there, nothing is printed from history.
	Revisions []string
	// GitIncludes says the files git's configuration includes are read
	// (git config --list): the gate finds them, Path is the directory
	// git runs in.
	GitIncludes bool
	// Dashed, for Revisions, says a "--" followed them: git takes them as
	// revisions even where a file of that name exists.
	Dashed bool
	// Link says a symbolic link is made to Path (ln -s): later reads and
	// writes through the link reach it, so it is judged as a write target
	// of the files approvalbot protects, too.
	Link bool
	// By names the command or redirection that reads, for explanations.
	By string
}

package gate

import (
	"path/filepath"
	"strings"

	"approvalbot/shell"
)

// Self-protection: an agent must never rewrite its own permissions, so
// writes to the Protected paths (rules file, data dir, settings) and
// commands that decide approvals are denied before any rule is consulted.

// pathEffect is what a command does to the paths it is given.
type pathEffect int

const (
	writesPaths  pathEffect = iota + 1 // creates or changes the path
	removesPaths                       // removes, moves or re-permissions the path and what is below it
)

// writerCommands are the commands that obviously write, remove or move the
// paths among their arguments. sed and perl count only with -i.
var writerCommands = map[string]pathEffect{
	"rm": removesPaths, "rmdir": removesPaths, "unlink": removesPaths, "shred": removesPaths,
	"mv": removesPaths, "chmod": removesPaths, "chown": removesPaths, "chgrp": removesPaths,
	"chattr": removesPaths, "rsync": removesPaths,
	"cp": writesPaths, "tee": writesPaths, "truncate": writesPaths, "touch": writesPaths,
	"ln": writesPaths, "install": writesPaths, "dd": writesPaths, "mkdir": writesPaths,
	"sed": writesPaths, "perl": writesPaths, "patch": writesPaths, "tar": writesPaths,
}

// selfApprovalCommands are approvalbot subcommands that decide approvals or
// change rules and modes.
var selfApprovalCommands = map[string]bool{"approve": true, "deny": true, "rules": true, "mode": true}

// httpClients are commands that could call the daemon's API directly.
var httpClients = map[string]bool{"curl": true, "wget": true, "http": true, "https": true, "xh": true}

// protectCommand returns why the builtin layer denies cmd, or "".
func (p *Policy) protectCommand(cmd *shell.Command, cwd string) string {
	if len(cmd.Argv) == 0 {
		return ""
	}
	name := filepath.Base(cmd.Argv[0])
	args := cmd.Argv[1:]
	if name == "approvalbot" {
		// Any word before "--": flags may take values (`--url X deny ID`).
		for _, a := range args {
			if a == "--" {
				break
			}
			if selfApprovalCommands[a] {
				return "an agent may not run `approvalbot " + a + "`: approvals and rules are decided by people"
			}
		}
	}
	if httpClients[name] {
		for _, a := range args {
			if strings.Contains(a, "/v1/rules") ||
				strings.Contains(a, "/v1/approvals/") && (strings.Contains(a, "/approve") || strings.Contains(a, "/deny")) {
				return "an agent may not call approvalbot's approval or rules API"
			}
		}
	}
	effect, ok := writerCommands[name]
	if !ok || len(p.protected) == 0 {
		return ""
	}
	if (name == "sed" || name == "perl") && !hasInPlaceFlag(args) {
		return ""
	}
	for _, a := range args {
		for _, cand := range pathCandidates(a) {
			if why := p.protectArg(cand, cwd, effect); why != "" {
				return why
			}
		}
	}
	return ""
}

// protectArg judges one path argument of a writer command.
func (p *Policy) protectArg(arg, cwd string, effect pathEffect) string {
	if arg == "" || strings.Contains(arg, shell.Dyn) {
		return ""
	}
	ps, ok := resolvePath(arg, cwd, p.home)
	if !ok {
		// A relative argument without a cwd could point anywhere, the
		// protected files included.
		if !filepath.IsAbs(arg) && cwd == "" {
			return "cannot tell where `" + arg + "` points (no cwd) and it could be approvalbot's own files"
		}
		return ""
	}
	if pr := p.protectedBy(ps.abs); pr != "" {
		return "writes to approvalbot's own files (" + pr + ") are denied"
	}
	if effect == removesPaths {
		if pr := p.protectedBelow(ps.abs); pr != "" {
			return "removing or moving " + ps.abs + " would take approvalbot's own files (" + pr + ") with it"
		}
	}
	return ""
}

// pathCandidates returns the possible paths in one argument: the argument
// itself unless it is an option, and the value of NAME=VALUE and
// --opt=VALUE forms (dd of=..., --target-directory=...).
func pathCandidates(a string) []string {
	var out []string
	if !strings.HasPrefix(a, "-") {
		out = append(out, a)
	}
	if i := strings.IndexByte(a, '='); i >= 0 {
		out = append(out, a[i+1:])
	}
	return out
}

// hasInPlaceFlag reports whether sed/perl args edit files in place.
func hasInPlaceFlag(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "--in-place") {
			return true
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'i') {
			// -i, -i.bak, -ni, -pi -e ...
			return true
		}
	}
	return false
}

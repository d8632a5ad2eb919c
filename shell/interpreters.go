package shell

// Interpreters given code on their command line (python -c, node -e, ...).

import (
	"strings"
)

// codeFlag reports an interpreter given code on its command line
// (python -c, node -e, perl -e, ...): exact Always patterns only.
func codeFlag(argv []string) bool {
	return codeFlagArgs(baseName(field{s: argv[0], dyn: strings.Contains(argv[0], Dyn)}), argv[1:])
}

func codeFlagArgs(name string, a []string) bool {
	var flags, argOpts, stops string // stops: options after which the rest is the program's
	var long []string
	switch {
	case isPython(name):
		flags, argOpts, stops = "c", "WXQ", "m"
	case name == "node" || name == "nodejs" || name == "bun":
		flags, argOpts, long = "ep", "r", []string{"--eval", "--print"}
	case name == "perl" || name == "ruby":
		flags, argOpts = "eE", "I"
	case name == "php":
		flags, argOpts = "rRBE", "cdz"
	case name == "lua" || name == "luajit" || name == "Rscript" || name == "osascript" || name == "tclsh" || name == "jshell":
		flags = "e"
	case name == "pwsh" || name == "powershell":
		flags, long = "cCeE", []string{"-command", "-Command", "-encodedcommand", "-EncodedCommand"}
	case name == "deno":
		return len(a) > 0 && a[0] == "eval"
	default:
		return false
	}
	// No script (or "-"): the code comes on standard input.
	script := false
	for _, s := range a {
		switch {
		case s == "--version" || s == "-V" || s == "--help" || s == "-h" || s == "-v" && !isPython(name):
			return false
		case s == "-":
			return true
		case len(s) > 0 && s[0] != '-':
			script = true
		}
	}
	if !script {
		return true
	}
	// A code flag before a word that looks like a script (an option's
	// value may pass for one: node --title t -e CODE).
	for _, s := range a {
		if s == "--" || len(s) > 0 && s[0] != '-' && strings.ContainsAny(s, "./") {
			break
		}
		if len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.ContainsAny(s[1:], stops) && stops != "" {
			break // python -m MODULE: the rest is the module's
		}
		for _, l := range long {
			if s == l || strings.HasPrefix(s, l+"=") {
				return true
			}
		}
		if len(s) == 2 && s[0] == '-' && strings.IndexByte(flags, s[1]) >= 0 {
			return true
		}
	}
	for i := 0; i < len(a); i++ {
		s := a[i]
		if s == "--" || len(s) < 2 || s[0] != '-' {
			return false // the script or its arguments
		}
		for _, l := range long {
			if s == l || strings.HasPrefix(s, l+"=") {
				return true
			}
		}
		if s[1] == '-' {
			continue
		}
		for j := 1; j < len(s); j++ {
			if strings.IndexByte(flags, s[j]) >= 0 {
				return true
			}
			if strings.IndexByte(stops, s[j]) >= 0 {
				return false
			}
			if strings.IndexByte(argOpts, s[j]) >= 0 {
				if j == len(s)-1 {
					i++ // the option's value is the next word
				}
				break
			}
		}
	}
	return false
}

func isPython(name string) bool {
	rest, ok := strings.CutPrefix(name, "python")
	if !ok {
		rest, ok = strings.CutPrefix(name, "pypy")
	}
	if !ok {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if (rest[i] < '0' || rest[i] > '9') && rest[i] != '.' {
			return false
		}
	}
	return true
}

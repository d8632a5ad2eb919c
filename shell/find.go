package shell

// find: predicates, actions that write, and the commands -exec runs.

import (
	"path"
	"strings"
)

// findPreds maps find's tests and actions to the number of arguments they
// take; -exec and friends are handled apart.
var findPreds = map[string]int{
	"-print": 0, "-print0": 0, "-ls": 0, "-prune": 0, "-quit": 0, "-true": 0, "-false": 0, "-empty": 0,
	"-readable": 0, "-writable": 0, "-executable": 0, "-nouser": 0, "-nogroup": 0, "-depth": 0, "-d": 0,
	"-mount": 0, "-xdev": 0, "-noleaf": 0, "-follow": 0, "-daystart": 0, "-ignore_readdir_race": 0,
	"-noignore_readdir_race": 0, "-not": 0, "!": 0, "-a": 0, "-and": 0, "-o": 0, "-or": 0, ",": 0, "(": 0, ")": 0,
	"-warn": 0, "-nowarn": 0, "-help": 0, "--help": 0, "-version": 0, "--version": 0,
	"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1, "-regex": 1, "-iregex": 1,
	"-type": 1, "-xtype": 1, "-size": 1, "-perm": 1, "-user": 1, "-group": 1, "-uid": 1, "-gid": 1, "-mtime": 1,
	"-mmin": 1, "-atime": 1, "-amin": 1, "-ctime": 1, "-cmin": 1, "-newer": 1, "-anewer": 1, "-cnewer": 1,
	"-links": 1, "-inum": 1, "-samefile": 1, "-lname": 1, "-ilname": 1, "-maxdepth": 1, "-mindepth": 1,
	"-fstype": 1, "-printf": 1, "-used": 1, "-context": 1, "-regextype": 1,
}

// findExecs are find's actions that run a command up to `;` or `+`.
func findExec(s string) bool {
	return s == "-exec" || s == "-execdir" || s == "-ok" || s == "-okdir"
}

func (a *analyzer) find(fs []field) (string, string) {
	args := fs[1:]
	i := 0
	for i < len(args) {
		s := args[i].s
		if s == "-H" || s == "-L" || s == "-P" || strings.HasPrefix(s, "-O") && isDigits(s[2:]) {
			i++
			continue
		}
		if s == "-D" {
			i += 2
			continue
		}
		break
	}
	hazard := ""
	for ; i < len(args); i++ {
		f := args[i]
		if f.dyn || f.glob {
			return "not understood: a word only known at run time in find's arguments (bash expands it before find sees it)", ""
		}
		s := f.s
		if findExec(s) {
			end := findExecEnd(args, i+1, s)
			for _, w := range args[i+1 : min(end, len(args))] {
				if w.dyn && w.split {
					// It may split into a `;` that ends the command early.
					return "not understood: an unquoted word only known at run time in find's " + s + " command", ""
				}
			}
			i = end
			continue
		}
		if n, ok := findPreds[s]; ok {
			for _, w := range args[i+1 : min(i+1+n, len(args))] {
				if why := splitValue(w, s, "find"); why != "" {
					return "not understood: " + why, ""
				}
			}
			i += n
			continue
		}
		if strings.HasPrefix(s, "-newer") && len(s) == 8 {
			i++
			continue
		}
		switch s {
		case "-delete":
			hazard = "find -delete"
		case "-fprint", "-fprint0", "-fls":
			if i+1 < len(args) {
				i++
				a.writeTarget("find "+s, args[i])
			}
		case "-fprintf":
			if i+2 < len(args) {
				i++
				a.writeTarget("find "+s, args[i])
				i++
			}
		case "-files0-from":
			return "not understood: find -files0-from reads the starting points from a file", ""
		default:
			if strings.HasPrefix(s, "-") {
				return "not understood: find " + s, ""
			}
			// A starting point: find lists names, it reads no content.
		}
	}
	return "", hazard
}

// findNames returns the field that stands for `{}` in the find action at
// args[at]: any name under the starting points that matches a -name test
// the action depends on. find evaluates left to right, -a binding tighter
// than -o and `,`: only a -name of the same run of tests before the action,
// not negated, narrows what reaches it; with parentheses anywhere before it,
// every name does.
func findNames(args []field, at int) field {
	name := "*"
	start := findStart(args)
	seg, parens := 0, false
	for i := 0; i < at && i < len(args); i++ {
		switch s := args[i].s; {
		case findExec(s):
			i = findExecEnd(args, i+1, s)
		case s == "-o" || s == "-or" || s == ",":
			seg = i + 1
		case s == "(" || s == ")":
			parens = true
		default:
			i += findPreds[s]
		}
	}
	for i := seg; !parens && i < at && i < len(args); i++ {
		s := args[i].s
		if findExec(s) {
			i = findExecEnd(args, i+1, s)
			continue
		}
		negated := i > 0 && (args[i-1].s == "!" || args[i-1].s == "-not")
		if s == "-name" && i+1 < at && !args[i+1].dyn && !negated {
			name = args[i+1].s
			break
		}
		i += findPreds[s]
	}
	return field{s: Dyn, dyn: true, expanded: true, glob: true, quoted: true, pat: strings.TrimSuffix(start, "/") + "/*" + name, rec: true}
}

// findStart returns the directory every starting point lies in: the
// starting points are the words before the expression (none means "."),
// and with several, `{}` may be a name under any of them.
func findStart(args []field) string {
	var starts []string
	// Options before the starting points (find -P ~/.ssh -exec ...).
	for len(args) > 0 && (args[0].s == "-H" || args[0].s == "-L" || args[0].s == "-P" || strings.HasPrefix(args[0].s, "-O")) {
		args = args[1:]
	}
	if len(args) > 1 && args[0].s == "-D" {
		args = args[2:]
	}
	for _, f := range args {
		if strings.HasPrefix(f.s, "-") || f.s == "(" || f.s == "!" || f.s == ")" || f.s == "," {
			break
		}
		starts = append(starts, path.Clean(f.s))
	}
	switch len(starts) {
	case 0:
		return "."
	case 1:
		return starts[0]
	}
	common := strings.Split(starts[0], "/")
	for _, s := range starts {
		if path.IsAbs(s) != path.IsAbs(starts[0]) || s == ".." || strings.HasPrefix(s, "../") {
			return "/" // several places, one of them above this directory
		}
		parts := strings.Split(s, "/")
		n := 0
		for n < len(common) && n < len(parts) && common[n] == parts[n] {
			n++
		}
		common = common[:n]
	}
	if c := strings.Join(common, "/"); c != "" {
		return c
	}
	if path.IsAbs(starts[0]) {
		return "/"
	}
	return "."
}

// findExecEnd returns the index of the `;` that ends the command of the
// action (-exec, -execdir, -ok, -okdir) starting at args[i], or, for -exec
// and -execdir, of a `+` right after `{}` (GNU find takes `+` as the end
// only there, and never for -ok and -okdir, whose command runs on to `;`);
// len(args) when there is none.
func findExecEnd(args []field, i int, action string) int {
	plus := action == "-exec" || action == "-execdir"
	for j := i; j < len(args); j++ {
		if args[j].dyn {
			continue
		}
		if args[j].s == ";" || plus && args[j].s == "+" && j > i && args[j-1].s == "{}" && !args[j-1].dyn {
			return j
		}
	}
	return len(args)
}

package shell

import (
	"strings"
)

// Programs whose command lines are small languages of their own: git,
// find, sed, awk and jq. Each handler returns why the command is not
// understood ("" when it is) and the hazard it carries.

// gitDanger are git long options that run programs, write files or point
// git at other repositories. git accepts any unique prefix of a long
// option, so a word that is a prefix of one of these asks.
var gitDanger = []string{"output", "output-directory", "ext-diff", "textconv", "exec", "exec-path", "upload-pack",
	"receive-pack", "open-files-in-pager", "config", "config-env", "template", "separate-git-dir", "git-dir",
	"work-tree", "extcmd", "tool", "strategy", "upload-archive", "remote"}

// gitExact are options that are prefixes of a gitDanger entry but are
// options of their own (an exact name wins over an abbreviation).
var gitExact = map[string]bool{"text": true, "exit-code": true}

// gitShortDanger lists short options that run programs or write files, per
// subcommand.
var gitShortDanger = map[string]string{"format-patch": "o", "rebase": "x", "grep": "O", "clone": "cu", "archive": "o"}

func (a *analyzer) git(fs []field) (string, string) {
	args := fs[1:]
	for _, f := range args {
		if f.dyn && !f.glob || f.glob && !safeGlobStart(f.pat) {
			return "not understood: a word only known at run time in git's arguments (it could be an option)", ""
		}
	}
	i := 0
globals:
	for i < len(args) {
		s := args[i].s
		name, _, _ := strings.Cut(s, "=")
		switch name {
		case "-C":
			i += 2
		case "-c", "--config-env":
			return "", "git " + name + " sets configuration that can run programs"
		case "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--bare", "--attr-source", "--list-cmds":
			return "", "git " + name + " points git at other files"
		case "--exec-path":
			if s != name {
				return "", "git --exec-path= runs git's programs from another directory"
			}
			i++
		case "-P", "--no-pager", "-p", "--paginate", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
			"--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch", "--no-advice",
			"--version", "--help", "--html-path", "--man-path", "--info-path":
			i++
		default:
			if strings.HasPrefix(s, "-") {
				return "not understood: git global option " + s, ""
			}
			break globals
		}
	}
	if i >= len(args) {
		return "", ""
	}
	sub := args[i].s
	rest := args[i+1:]
	shortDanger := gitShortDanger[sub]
	noIndex := false
	for j := 0; j < len(rest); j++ {
		s := rest[j].s
		if s == "--" {
			break
		}
		if long, ok := strings.CutPrefix(s, "--"); ok {
			name, val, hasVal := strings.Cut(long, "=")
			if name == "no-index" {
				noIndex = true
			}
			if gitExact[name] {
				continue
			}
			for _, d := range gitDanger {
				if strings.HasPrefix(d, name) {
					return "", "git " + sub + " --" + name + " may run a program or write a file (it abbreviates --" + d + ")"
				}
			}
			if sub == "commit" && (name == "file" || name == "template") {
				if !hasVal && j+1 < len(rest) {
					j++
					val = rest[j].s
				}
				a.addRead(field{s: val}, "git commit --"+name, false)
			}
			continue
		}
		if len(s) > 1 && s[0] == '-' {
			if strings.ContainsAny(s[1:], shortDanger) && shortDanger != "" {
				return "", "git " + sub + " " + s + " may run a program or write a file"
			}
			if sub == "commit" && (s == "-F" || s == "-t") && j+1 < len(rest) {
				j++
				a.addRead(rest[j], "git commit "+s, false)
			}
		}
	}
	if sub == "diff" && noIndex {
		for _, f := range rest {
			if !strings.HasPrefix(f.s, "-") {
				a.addRead(f, "git diff --no-index", true)
			}
		}
	}
	return "", ""
}

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
			for i++; i < len(args) && args[i].s != ";" && args[i].s != "+"; i++ {
			}
			continue
		}
		if n, ok := findPreds[s]; ok {
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

// findNames returns the field that stands for `{}` in find's -exec: any
// name under the starting points that matches the first -name test.
func findNames(args []field) field {
	start, name := "", "*"
	for i, f := range args {
		s := f.s
		if strings.HasPrefix(s, "-") || s == "(" || s == "!" {
			if (s == "-name") && i+1 < len(args) && name == "*" && !args[i+1].dyn {
				name = args[i+1].s
			}
			continue
		}
		if start == "" && i < len(args) && !isFindOperandOfPred(args, i) {
			start = s
		}
	}
	if start == "" {
		start = "."
	}
	return field{s: Dyn, dyn: true, expanded: true, glob: true, quoted: true, pat: strings.TrimSuffix(start, "/") + "/*" + name, rec: true}
}

func isFindOperandOfPred(args []field, i int) bool {
	if i == 0 {
		return false
	}
	n, ok := findPreds[args[i-1].s]
	return ok && n > 0 || findExec(args[i-1].s)
}

// sed judges sed: options from the GNU table, then a script that must be
// made only of commands that print, delete and substitute in memory.
func (a *analyzer) sed(fs []field) (string, string) {
	p := programs["sed"]
	opts, operands, why := p.parseArgs("sed", fs[1:])
	if why != "" {
		return "not understood: " + why, ""
	}
	var scripts []field
	for _, o := range opts {
		if h := p.danger[o.name]; h != "" {
			return "", h
		}
		if o.name == "-e" || o.name == "--expression" {
			scripts = append(scripts, o.val)
		}
	}
	if len(scripts) == 0 {
		if len(operands) == 0 {
			return "not understood: sed without a script", ""
		}
		scripts, operands = operands[:1], operands[1:]
	}
	for _, s := range scripts {
		if s.dyn || s.glob {
			return "not understood: a sed script only known at run time", ""
		}
		if w := sedScript(s.s); w != "" {
			return "not understood: sed script: " + w, ""
		}
	}
	for _, f := range operands {
		a.addRead(f, "sed", false)
	}
	return "", ""
}

// sedScript says why a GNU sed script is not understood: only addresses,
// blocks, labels and the commands p P d D n N q Q = l g G h H x z and
// s/// with the flags g p i I m M and a number are. Delimiters are found
// as GNU sed finds them (an unescaped delimiter ends a part; brackets do
// not protect it).
func sedScript(s string) string {
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ';') {
			i++
		}
		if i >= len(s) {
			return ""
		}
		if s[i] == '#' {
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		}
		var ok bool
		if i, ok = sedAddress(s, i); !ok {
			return "an address it does not model"
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i < len(s) && s[i] == ',' {
			i++
			if i < len(s) && (s[i] == '+' || s[i] == '~') {
				i++
				j := i
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
				if i == j {
					return "an address it does not model"
				}
			} else if i, ok = sedAddress(s, i); !ok {
				return "an address it does not model"
			}
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '!') {
			i++
		}
		if i >= len(s) {
			return "a script that ends after an address"
		}
		c := s[i]
		i++
		switch c {
		case '{':
			continue // a block: commands follow at once
		case 'p', 'P', 'd', 'D', 'n', 'N', '=', 'g', 'G', 'h', 'H', 'x', 'z', '}':
		case 'q', 'Q', 'l', 'L':
			for i < len(s) && (s[i] == ' ' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
		case ':', 'b', 't', 'T':
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			j := i
			for i < len(s) && isAwkIdentByte(s[i]) {
				i++
			}
			if c == ':' && i == j {
				return "an empty label"
			}
		case 's':
			if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
				return "an s command with an unusual delimiter"
			}
			d := s[i]
			var ok bool
			if i, ok = sedPart(s, i+1, d); !ok {
				return "an unterminated s command"
			}
			if i, ok = sedPart(s, i, d); !ok {
				return "an unterminated s command"
			}
			for i < len(s) && strings.IndexByte("gpiImM0123456789", s[i]) >= 0 {
				i++
			}
		case 'y':
			if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
				return "a y command with an unusual delimiter"
			}
			d := s[i]
			var ok bool
			if i, ok = sedPart(s, i+1, d); !ok {
				return "an unterminated y command"
			}
			if i, ok = sedPart(s, i, d); !ok {
				return "an unterminated y command"
			}
		default:
			return "the command " + string(c) + " (it may read or write files, run commands, or is not modelled)"
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' && s[i] != '#' {
			return "text after a command"
		}
	}
	return ""
}

// sedAddress skips an optional address at s[i].
func sedAddress(s string, i int) (int, bool) {
	if i >= len(s) {
		return i, true
	}
	switch c := s[i]; {
	case c >= '0' && c <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i < len(s) && s[i] == '~' {
			i++
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		}
	case c == '$':
		i++
	case c == '/' || c == '\\':
		d := byte('/')
		if c == '\\' {
			if i+1 >= len(s) || s[i+1] == '\n' || s[i+1] == '\\' {
				return i, false
			}
			d = s[i+1]
			i++
		}
		var ok bool
		if i, ok = sedPart(s, i+1, d); !ok {
			return i, false
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
	}
	return i, true
}

// sedPart returns the index after the unescaped delimiter d that ends the
// part starting at s[i]; a newline in a part is not modelled.
func sedPart(s string, i int, d byte) (int, bool) {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\n':
			return i, false
		case d:
			return i + 1, true
		}
	}
	return i, false
}

// awk judges awk: the program must not run commands, read with getline or
// redirect output, except to /dev/stdout and /dev/stderr. The text is
// scanned raw, without trusting where strings or regular expressions end,
// since a regex literal can hide a quote.
func (a *analyzer) awk(name string, fs []field) (string, string) {
	args := fs[1:]
	var prog *field
	var operands []field
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dyn || f.glob {
			if prog == nil {
				return "not understood: an awk program only known at run time", ""
			}
			operands = append(operands, f)
			continue
		}
		s := f.s
		switch {
		case prog != nil || s == "-" || !strings.HasPrefix(s, "-"):
			if prog == nil {
				prog = &args[i]
				continue
			}
			operands = append(operands, f)
		case s == "--":
			if prog == nil && i+1 < len(args) {
				i++
				prog = &args[i]
			}
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case s == "-F" || s == "-v":
			i++
			if i < len(args) && args[i].dyn && s == "-v" {
				return "not understood: awk -v with a value only known at run time", ""
			}
		case strings.HasPrefix(s, "-F") || strings.HasPrefix(s, "-v"):
		default:
			return "not understood: awk option " + s, ""
		}
	}
	if prog == nil {
		return "not understood: awk without a program", ""
	}
	if w := awkProgram(prog.s); w != "" {
		return "", "awk " + w
	}
	for _, f := range operands {
		if !f.dyn && isAssignWord(f.s) {
			continue // var=value
		}
		a.addRead(f, name, false)
	}
	return "", ""
}

// awkProgram says why an awk program may run commands, read or write
// files. Strings and regular expressions are blanked first, telling a
// regex from a division as awk does; where that is unclear, it asks.
func awkProgram(p string) string {
	blank, ok := awkBlank(p)
	if !ok {
		return "program whose strings or regular expressions are unclear"
	}
	for _, w := range []string{"system", "getline", "@", "|"} {
		if strings.Contains(strings.ReplaceAll(blank, "||", "  "), w) {
			return "program uses " + w
		}
	}
	for i := 0; i < len(blank); i++ {
		if blank[i] != '>' {
			continue
		}
		if i+1 < len(blank) && blank[i+1] == '=' {
			i++
			continue
		}
		if !awkInPrint(blank, i) {
			continue // a comparison
		}
		rest := strings.TrimLeft(p[i+1:], " \t>")
		ok := false
		for _, sink := range []string{`"/dev/stderr"`, `"/dev/stdout"`} {
			if after, found := strings.CutPrefix(rest, sink); found {
				after = strings.TrimLeft(after, " \t")
				ok = after == "" || strings.IndexByte(";}\n", after[0]) >= 0
			}
		}
		if !ok {
			return "program may redirect output to a file"
		}
	}
	return ""
}

// awkInPrint reports whether the `>` at blank[i] is an output redirection:
// it follows print or printf in the same statement, outside parentheses.
func awkInPrint(blank string, i int) bool {
	depth := 0
	for j := i - 1; j >= 0; j-- {
		switch c := blank[j]; c {
		case ')':
			depth++
		case '(':
			if depth == 0 {
				return false // inside parentheses: a comparison
			}
			depth--
		case ';', '{', '}', '\n':
			return false
		default:
			if depth == 0 && strings.HasPrefix(blank[j:], "print") && (j == 0 || !isAwkIdentByte(blank[j-1])) {
				return true
			}
		}
	}
	return false
}

// awkBlank replaces the contents of strings, regular expressions and
// comments with spaces, keeping every other byte where it was.
func awkBlank(p string) (string, bool) {
	b := []byte(p)
	operand := false // the previous token ends an operand: `/` divides
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			j := i + 1
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
				if j < len(b) && b[j] == '\n' {
					return "", false
				}
			}
			if j >= len(b) {
				return "", false
			}
			for k := i + 1; k < j; k++ {
				b[k] = ' '
			}
			i, operand = j+1, true
		case c == '/' && !operand:
			j := i + 1
			for ; j < len(b) && b[j] != '/'; j++ {
				switch b[j] {
				case '\\':
					j++
				case '\n':
					return "", false
				case '[':
					// awks differ on a `/` inside brackets.
					for k := j; k < len(b) && b[k] != ']'; k++ {
						if b[k] == '/' || b[k] == '"' {
							return "", false
						}
					}
				}
			}
			if j >= len(b) {
				return "", false
			}
			for k := i + 1; k < j; k++ {
				b[k] = ' '
			}
			i, operand = j+1, true
		case c == '#':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case isAwkIdentByte(c) && !(c >= '0' && c <= '9'):
			j := i
			for j < len(b) && isAwkIdentByte(b[j]) {
				j++
			}
			switch string(b[i:j]) {
			case "print", "printf", "return", "in", "if", "else", "while", "for", "do", "case", "default",
				"getline", "delete", "exit", "next", "nextfile", "BEGIN", "END", "function", "func", "length":
				operand = false
				if string(b[i:j]) == "length" {
					return "", false // `length / x /` is read differently by awks
				}
			default:
				operand = true
			}
			i = j
		case c >= '0' && c <= '9' || c == '.':
			for i < len(b) && (isAwkIdentByte(b[i]) || b[i] == '.') {
				i++
			}
			operand = true
		case c == ')' || c == ']':
			i, operand = i+1, true
		case c == '+' && i+1 < len(b) && b[i+1] == '+', c == '-' && i+1 < len(b) && b[i+1] == '-':
			i += 2 // x++ stays an operand; ++x is followed by one
		case c == ' ' || c == '\t':
			i++
		case c == '\\' && i+1 < len(b) && b[i+1] == '\n':
			i += 2
		default:
			i, operand = i+1, false
		}
	}
	return string(b), true
}

// jq judges jq: its filter cannot run programs; files it reads come from
// operands, -f, --rawfile and --slurpfile.
func (a *analyzer) jq(fs []field) (string, string) {
	p := programs["jq"]
	args := fs[1:]
	haveFilter, positional := false, false
	for i := 0; i < len(args); i++ {
		f := args[i]
		if positional {
			continue
		}
		if f.dyn || f.glob {
			if !haveFilter {
				return "not understood: a jq filter or option only known at run time", ""
			}
			a.addRead(f, "jq", false)
			continue
		}
		s := f.s
		switch {
		case s == "--args" || s == "--jsonargs":
			positional = true
		case s == "--arg" || s == "--argjson":
			i += 2
		case s == "--slurpfile" || s == "--rawfile":
			if i+2 < len(args) {
				a.addRead(args[i+2], "jq "+s, false)
			}
			i += 2
		case s == "--indent":
			i++
		case strings.HasPrefix(s, "--"):
			name := strings.TrimPrefix(s, "--")
			k, ok := p.long[name]
			if !ok {
				return "not understood: jq option " + s, ""
			}
			if k == '=' && i+1 < len(args) {
				i++
				if name == "from-file" {
					a.addRead(args[i], "jq "+s, false)
					haveFilter = true
				}
			}
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				c := s[j]
				switch {
				case strings.IndexByte(p.short, c) >= 0:
				case c == 'f' || c == 'L':
					if i+1 < len(args) {
						i++
						if c == 'f' {
							a.addRead(args[i], "jq -f", false)
							haveFilter = true
						}
					}
					j = len(s)
				default:
					return "not understood: jq option -" + string(c), ""
				}
			}
		default:
			if !haveFilter {
				haveFilter = true
				continue
			}
			a.addRead(f, "jq", false)
		}
	}
	return "", ""
}

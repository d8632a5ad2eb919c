package shell

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// progSpec is what the analyzer knows of one program's command line.
type progSpec struct {
	short      string          // short options without an argument
	shortArg   string          // short options with a required argument
	shortOpt   string          // short options with an optional, attached argument
	long       map[string]byte // long option -> 0, '=' (required) or '?' (optional, after =)
	abbrev     bool            // long options may be abbreviated to a unique prefix (getopt_long)
	digits     bool            // -NUM is an option (grep -5, head -20)
	plusDigits bool            // +NUM is an option (uniq +2, tail +5)
	eqShort    bool            // a short option's attached value may start with "=" (clap: rg -g=GLOB)
	// danger maps an option ("-o", "--output") to why it asks.
	danger map[string]string
	// readOpt lists options whose value is a file the program reads;
	// listOpt those whose value is a file listing more files to read.
	readOpt, listOpt map[string]bool
	operands         operandRole
	// recursive lists options that make directory operands read whole.
	recursive map[string]bool
}

// operandRole says what a program does with its operands.
type operandRole int

const (
	opNone        operandRole = iota // not files, or only metadata (ls, stat, du)
	opRead                           // every operand is a file read
	opReadWrite                      // [INPUT [OUTPUT]] (uniq)
	opWrite                          // every operand is a file written (tee, touch)
	opPatternRead                    // the first operand is a pattern unless -e/-f gave one; the rest are read (grep)
	opCopy                           // SOURCE... DEST, or -t DIR SOURCE...: sources read, destination written (cp, install)
	opMove                           // as opCopy, and the sources are removed (mv)
	opLink                           // as opCopy, but a symbolic link reads nothing (ln)
)

// inert reports a program none of whose options reads, writes or runs
// anything: a word only known at run time cannot change what it does.
func (p *progSpec) inert() bool {
	return len(p.danger) == 0 && len(p.readOpt) == 0 && len(p.listOpt) == 0 && p.operands == opNone
}

// programs is built on first use (not at start-up: every hook process links
// this package and never analyses a line) from gnuTable and the hand-written
// entries below; it is read-only after that.
var programs = sync.OnceValue(buildPrograms)

func buildPrograms() map[string]*progSpec {
	m := make(map[string]*progSpec, 64)
	for _, line := range strings.Split(strings.TrimSpace(gnuTable), "\n") {
		cols := strings.Split(line, "\t")
		if len(cols) != 5 {
			panic("shell: bad gnuTable line " + line)
		}
		sp := &progSpec{short: cols[1], shortArg: cols[2], shortOpt: cols[3], long: parseLongs(cols[4]), abbrev: true}
		m[cols[0]] = sp
	}
	d := func(name string, danger ...string) {
		sp := m[name]
		sp.danger = make(map[string]string, len(danger)/2)
		for i := 0; i+1 < len(danger); i += 2 {
			sp.danger[danger[i]] = danger[i+1]
		}
	}
	set := func(keys ...string) map[string]bool {
		s := make(map[string]bool, len(keys))
		for _, k := range keys {
			s[k] = true
		}
		return s
	}
	for _, n := range []string{"cat", "head", "tail", "wc", "cut", "nl", "tac", "comm", "paste", "join", "fold", "fmt",
		"od", "base64", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cmp", "diff", "rev", "expand", "unexpand", "sort"} {
		m[n].operands = opRead
	}
	m["uniq"].operands = opReadWrite
	m["tee"].operands = opWrite
	m["mkdir"].operands = opWrite // a directory made where programs are found, outside the project
	m["touch"].operands = opWrite
	m["cp"].operands, m["install"].operands, m["mv"].operands, m["ln"].operands = opCopy, opCopy, opMove, opLink
	m["cp"].recursive = set("-r", "-R", "--recursive", "-a", "--archive")
	m["mv"].recursive = set("*") // a directory moved takes its files to the new name
	d("install", "--strip-program", "runs a program (install --strip-program)")
	m["grep"].operands = opPatternRead
	// egrep and fgrep are grep -E and grep -F.
	m["egrep"], m["fgrep"] = m["grep"], m["grep"]
	// file prints what a magic file (-m) says of each operand: their content.
	m["file"].operands = opRead
	m["grep"].digits, m["head"].digits, m["tail"].digits, m["uniq"].digits = true, true, true, true
	m["tail"].plusDigits, m["uniq"].plusDigits = true, true
	d("sort", "-o", "writes a file (sort -o)", "--output", "writes a file (sort --output)",
		"--compress-program", "runs a program (sort --compress-program)")
	m["sort"].readOpt = set("--random-source")
	m["sort"].listOpt = set("--files0-from")
	m["wc"].listOpt = set("--files0-from")
	m["du"].listOpt = set("--files0-from")
	m["du"].readOpt = set("-X", "--exclude-from")
	for _, n := range []string{"md5sum", "sha1sum", "sha256sum", "sha512sum"} {
		m[n].listOpt = set("-c", "--check")
	}
	d("date", "-s", "sets the system clock (date -s)", "--set", "sets the system clock (date --set)")
	m["date"].readOpt = set("-f", "--file")
	m["diff"].readOpt = set("--from-file", "--to-file", "-X", "--exclude-from")
	// diff compares the files inside a directory operand even without -r.
	m["diff"].recursive = set("*")
	m["grep"].readOpt = set("-f", "--file", "--exclude-from")
	m["grep"].recursive = set("-r", "-R", "--recursive", "--dereference-recursive")
	d("sed", "-i", "edits files in place (sed -i)", "--in-place", "edits files in place (sed --in-place)",
		"-f", "runs a sed script from a file", "--file", "runs a sed script from a file")
	d("file", "-C", "writes a compiled magic file (file -C)", "--compile", "writes a compiled magic file (file --compile)",
		"-z", "runs decompressors on the file (file -z)", "-Z", "runs decompressors on the file (file -Z)",
		"--uncompress", "runs decompressors on the file (file --uncompress)",
		"--uncompress-noreport", "runs decompressors on the file (file --uncompress-noreport)")
	m["file"].readOpt = set("-m", "--magic-file")
	m["file"].listOpt = set("-f", "--files-from")

	m["jq"] = &progSpec{short: "ncesrRjaCMSehVb0", shortArg: "fL", long: parseLongs(
		"tab indent= seq stream stream-errors raw-input null-input raw-output raw-output0 join-output ascii-output " +
			"sort-keys color-output monochrome-output exit-status from-file= compact-output slurp unbuffered binary " +
			"version help build-configuration arg= argjson= slurpfile= rawfile= args jsonargs seq"),
		readOpt: set("-f", "--from-file")}
	m["rg"] = &progSpec{short: "abcFhHiIlLnNopPqsSuUvVwxz0.", shortArg: "ABCeEfgjmMrtT", long: parseLongs(
		"after-context= before-context= context= binary block-buffered byte-offset case-sensitive color= colors= column " +
			"context-separator= count count-matches crlf debug dfa-size-limit= encoding= engine= field-context-separator= " +
			"field-match-separator= file= files files-with-matches files-without-match fixed-strings follow glob= " +
			"glob-case-insensitive heading help hidden iglob= ignore-case ignore-file= ignore-file-case-insensitive " +
			"include-zero invert-match json line-buffered line-number line-regexp max-columns= max-columns-preview " +
			"max-count= max-depth= max-filesize= mmap multiline multiline-dotall no-config no-filename no-heading " +
			"no-ignore no-ignore-dot no-ignore-exclude no-ignore-files no-ignore-global no-ignore-messages " +
			"no-ignore-parent no-ignore-vcs no-line-number no-messages no-mmap no-pcre2-unicode no-require-git " +
			"no-unicode null null-data one-file-system only-matching passthru path-separator= pcre2 pcre2-version " +
			"pre= pre-glob= pretty quiet regex-size-limit= regexp= replace= search-zip smart-case sort= sortr= stats " +
			"stop-on-nonmatch text threads= trim type= type-add= type-clear= type-list type-not= unrestricted version " +
			"vimgrep with-filename word-regexp no-hidden no-follow no-search-zip no-text no-trim no-pre " +
			"no-line-buffered no-block-buffered no-byte-offset no-column no-context-separator no-crlf no-fixed-strings " +
			"no-glob-case-insensitive no-ignore-file-case-insensitive no-include-zero no-invert-match no-multiline " +
			"no-multiline-dotall no-one-file-system no-pcre2 no-sort-files sort-files no-stats max-depth= " +
			"hyperlink-format= generate= no-max-columns-preview line-number"),
		danger: map[string]string{"--pre": "runs a preprocessor (rg --pre)", "-z": "runs decompressors (rg -z)",
			"--search-zip": "runs decompressors (rg --search-zip)", "--hostname-bin": "runs a program (rg --hostname-bin)"},
		readOpt:   set("-f", "--file", "--ignore-file"),
		operands:  opPatternRead,
		recursive: set("*"),
		eqShort:   true,
	}
	m["rg"].long["hostname-bin"] = '='
	m["tree"] = &progSpec{short: "adfilpsugDFqNQrtcUvCASnxhRJX", shortArg: "LPIHTo", long: parseLongs(
		"noreport charset= filelimit= timefmt= dirsfirst filesfirst du si prune matchdirs ignore-case sort= gitignore " +
			"gitfile= info infofile= metafirst inodes device nolinks hintro= houtro= version help fromfile fromtabfile"),
		danger: map[string]string{"-o": "writes a file (tree -o)", "-R": "writes files (tree -R)",
			"--fromfile": "reads a listing from a file", "--fromtabfile": "reads a listing from a file"},
		// --hintro/--houtro print a file whole.
		readOpt: set("--gitfile", "--infofile", "--hintro", "--houtro"),
	}
	return m
}

// parseLongs parses "name name= name?" into a long option table.
func parseLongs(s string) map[string]byte {
	fs := strings.Fields(s)
	m := make(map[string]byte, len(fs))
	for _, f := range fs {
		switch {
		case strings.HasSuffix(f, "="):
			m[f[:len(f)-1]] = '='
		case strings.HasSuffix(f, "?"):
			m[f[:len(f)-1]] = '?'
		default:
			m[f] = 0
		}
	}
	return m
}

// parsedOpt is one option found on a command line.
type parsedOpt struct {
	name string // "-o" or "--output" (the full name, after abbreviation)
	val  field
	has  bool
}

// parseArgs splits a program's arguments into options and operands the way
// its parser does (getopt_long with permutation for GNU programs). It
// returns why the line is not understood: an unknown or ambiguous option,
// or a word only known at run time where an option may be.
func (p *progSpec) parseArgs(prog string, args []field) (opts []parsedOpt, operands []field, why string) {
	i := 0
	for ; i < len(args); i++ {
		f := args[i]
		if f.glob {
			if strings.HasPrefix(f.pat, "-") {
				// Matching nothing, it reaches the program as written: an
				// option (grep --include=.en?).
				return nil, nil, "an unquoted pattern starting with - in the arguments of " + prog + " (it is an option when it matches no file)"
			}
			// A pattern whose names could start with "-" would be options.
			if !safeGlobStart(f.pat) {
				if len(p.danger) > 0 {
					return nil, nil, "an unquoted pattern in the arguments of " + prog + " (a file name could be an option)"
				}
				if len(p.readOpt)+len(p.listOpt)+len(p.recursive) > 0 {
					f.optRisk = true // the gate checks the names on disk
				}
			}
			operands = append(operands, f)
			continue
		}
		if f.procsub {
			operands = append(operands, f)
			continue
		}
		if f.dyn {
			if !p.inert() {
				return nil, nil, "a word only known at run time in the arguments of " + prog + " (it could be an option)"
			}
			operands = append(operands, f)
			continue
		}
		s := f.s
		switch {
		case s == "--":
			return opts, append(operands, args[i+1:]...), ""
		case p.plusDigits && len(s) > 1 && s[0] == '+' && isDigits(s[1:]) && fitsUint64(s[1:]) && (prog != "tail" || i == 0 && len(args) <= 2):
			// (uniq takes +N anywhere; tail only first, before one file:
			// elsewhere, or +1x, it is a file.)
			// An obsolete +NUM option (uniq +2 skips characters, tail +5
			// starts at a line): not an operand.
			opts = append(opts, parsedOpt{name: s})
		case len(s) < 2 || s[0] != '-':
			operands = append(operands, f)
		case s[1] == '-':
			name, val, hasVal := strings.Cut(s[2:], "=")
			full, kind, w := p.lookupLong(name)
			if w != "" {
				return nil, nil, w + " of " + prog
			}
			o := parsedOpt{name: "--" + full}
			switch {
			case hasVal && kind == 0:
				return nil, nil, "option --" + full + " of " + prog + " takes no value"
			case hasVal:
				o.val, o.has = field{s: val}, true
			case kind == '=':
				if i+1 >= len(args) {
					return nil, nil, "option --" + full + " of " + prog + " without its value"
				}
				i++
				o.val, o.has = args[i], true
				if why := splitValue(args[i], "--"+full, prog); why != "" {
					return nil, nil, why
				}
			}
			opts = append(opts, o)
		default:
			if p.digits && s[1] >= '0' && s[1] <= '9' && (prog == "head" || prog == "tail") {
				// An obsolete -NUM (head -20), maybe with unit letters
				// (head -100c, tail -5l, tail -5f): one word, no value after.
				if strings.Trim(s[1:], "0123456789") != "" && strings.Trim(strings.TrimLeft(s[1:], "0123456789"), "bcklmf") != "" {
					return nil, nil, "option " + s + " of " + prog
				}
				opts = append(opts, parsedOpt{name: "-" + s[1:]})
				continue
			}
			if prog == "tree" && len(s) > 2 && strings.ContainsAny(s[1:len(s)-1], p.shortArg) {
				// tree takes each value from the next word and reads on in
				// the bundle (-Lo 1 FILE is -L 1 -o FILE), not getopt's way.
				return nil, nil, "a bundle of tree options with values (" + s + ")"
			}
			for j := 1; j < len(s); j++ {
				c := s[j]
				switch {
				case strings.IndexByte(p.short, c) >= 0:
					opts = append(opts, parsedOpt{name: "-" + string(c)})
				case strings.IndexByte(p.shortOpt, c) >= 0:
					o := parsedOpt{name: "-" + string(c)}
					if j+1 < len(s) {
						o.val, o.has = field{s: s[j+1:]}, true
					}
					opts = append(opts, o)
					j = len(s)
				case strings.IndexByte(p.shortArg, c) >= 0:
					o := parsedOpt{name: "-" + string(c), has: true}
					if j+1 < len(s) {
						o.val = field{s: s[j+1:]}
						if p.eqShort && s[j+1] == '=' {
							o.val = field{s: s[j+2:]} // rg -g=GLOB: the = is a separator
						}
					} else if i+1 < len(args) {
						i++
						o.val = args[i]
						if why := splitValue(args[i], "-"+string(c), prog); why != "" {
							return nil, nil, why
						}
					} else {
						return nil, nil, "option -" + string(c) + " of " + prog + " without its value"
					}
					opts = append(opts, o)
					j = len(s)
				case p.digits && c >= '0' && c <= '9':
				default:
					return nil, nil, "option -" + string(c) + " of " + prog
				}
			}
		}
	}
	return opts, operands, ""
}

// splitValue says why the word f cannot be taken as one option's value: an
// unquoted expansion known only at run time, or a pattern, may become
// several words, the rest operands (head -n $x F read x="1 ~/.ssh/id_rsa").
func splitValue(f field, opt, prog string) string {
	switch {
	case f.glob:
		return "an unquoted pattern as the value of " + opt + " of " + prog + " (its names after the first would be operands)"
	case f.dyn && f.split:
		return "an unquoted word only known at run time as the value of " + opt + " of " + prog + " (bash may split it into more words)"
	}
	return ""
}

// fitsUint64 reports a run of digits below 2^64: uniq takes a larger +N for
// a file.
func fitsUint64(d string) bool {
	_, err := strconv.ParseUint(d, 10, 64)
	return err == nil
}

// safeGlobStart reports a pattern whose matches all start with a literal
// character other than "-".
func safeGlobStart(pat string) bool {
	return pat != "" && strings.IndexByte("*?[-\\", pat[0]) < 0
}

// lookupLong resolves a long option name, abbreviations included.
func (p *progSpec) lookupLong(name string) (string, byte, string) {
	if k, ok := p.long[name]; ok {
		return name, k, ""
	}
	if !p.abbrev || name == "" {
		return "", 0, "option --" + name
	}
	found := ""
	for l := range p.long {
		if strings.HasPrefix(l, name) {
			if found != "" {
				return "", 0, "ambiguous option --" + name
			}
			found = l
		}
	}
	if found == "" {
		return "", 0, "option --" + name
	}
	return found, p.long[found], ""
}

// program judges a program from the table: its options, the files it reads
// and writes. It returns why the command is not understood and the hazard
// it carries.
func (a *analyzer) program(name string, fs []field) (dynamic, hazard string, known bool) {
	switch name {
	case "git":
		d, h := a.git(fs)
		return d, h, true
	case "find":
		d, h := a.find(fs)
		return d, h, true
	case "go":
		d, h := a.goCmd(fs)
		return d, h, true
	case "sed", "gsed":
		d, h := a.sed(fs)
		return d, h, true
	case "awk", "gawk", "mawk", "nawk":
		d, h := a.awk(name, fs)
		return d, h, true
	case "jq":
		d, h := a.jq(fs)
		return d, h, true
	case "tar", "gtar", "bsdtar", "unzip", "cpio", "7z", "7za":
		if why := extracts(name, fs[1:]); why != "" {
			return why, "", true
		}
		if a.archives(name, fs[1:]) {
			return "", "", true
		}
		return "", "", false
	case "zip":
		// zip ARCHIVE FILE...: the files go into an archive anyone can
		// unpack; -r walks directories.
		rec, n := false, 0
		for _, f := range fs[1:] {
			switch {
			case f.s == "-r" || f.s == "--recurse-paths" || strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "--") && strings.ContainsRune(f.s, 'r'):
				rec = true
			case strings.HasPrefix(f.s, "-"):
			default:
				if n++; n > 1 {
					a.addRead(f, "zip", rec)
				}
			}
		}
		return "", "", false
	case "gzip", "gunzip", "zcat", "xz", "unxz", "bzip2", "bunzip2", "zstd", "unzstd", "lz4", "compress", "uncompress":
		if a.compressor(name, fs[1:]) {
			return "", "", true
		}
		return "", "", false
	case "patch":
		for _, f := range fs[1:] {
			if f.s == "--dry-run" || f.s == "-C" || f.s == "--check" {
				return "", "", false // writes nothing; its arguments are judged as given
			}
		}
		return "not understood: patch writes the files named inside its patch, which the analysis does not read", "", true
	}
	p, ok := programs()[name]
	if !ok {
		return "", "", false
	}
	opts, operands, why := p.parseArgs(name, fs[1:])
	if why != "" {
		return "not understood: " + why, "", true
	}
	recursive := false
	for _, o := range opts {
		if h := p.danger[o.name]; h != "" && hazard == "" {
			hazard = h
		}
		if p.readOpt[o.name] {
			// diff --from-file=DIR reads DIR's files named like the operands.
			a.addRead(o.val, name+" "+o.name, p.recursive["*"])
			if name == "file" && !o.val.dyn && strings.Contains(o.val.s, ":") {
				// file -m A:B loads each (and prints the lines it cannot
				// parse).
				for _, part := range strings.Split(o.val.s, ":") {
					if part != "" {
						a.addRead(field{s: part}, name+" "+o.name, false)
					}
				}
			}
		}
		if p.listOpt[o.name] {
			return "not understood: " + name + " " + o.name + " reads the files named in another file", hazard, true
		}
		if p.recursive[o.name] {
			recursive = true
		}
		if name == "grep" && (o.name == "-d" || o.name == "--directories") {
			if o.val.dyn || o.val.glob {
				return "not understood: grep " + o.name + " with a value only known at run time", hazard, true
			}
			if strings.HasPrefix("recurse", o.val.s) && o.val.s != "" {
				recursive = true
			}
		}
	}
	if p.recursive["*"] {
		recursive = true
	}
	switch p.operands {
	case opRead:
		mark := len(a.an.Reads)
		for _, f := range operands {
			a.addRead(f, name, recursive)
		}
		if name == "diff" {
			for i := mark; i < len(a.an.Reads); i++ {
				a.an.Reads[i].FollowLinks = true // diff follows links inside directories
			}
		}
	case opReadWrite:
		for i, f := range operands {
			if i == 1 {
				a.writeTarget(name, f)
				continue
			}
			a.addRead(f, name, false)
		}
	case opWrite:
		for _, f := range operands {
			a.writeTarget(name, f)
		}
	case opCopy, opMove, opLink:
		a.copyLike(name, p.operands, opts, operands, recursive)
	case opPatternRead:
		given := false
		for _, o := range opts {
			switch o.name {
			case "-e", "--regexp", "-f", "--file":
				given = true
			}
		}
		if !given && len(operands) > 0 {
			if operands[0].glob {
				// A pattern in the pattern's place: its first name is the
				// pattern, the others files read (grep -hv ~/.ss?/* a.txt).
				a.addRead(operands[0], name, recursive)
			}
			operands = operands[1:]
		}
		if len(operands) == 0 && recursive {
			operands = []field{{s: "."}}
		}
		include := recursiveInclude(name, opts)
		follow := false
		for _, o := range opts {
			switch o.name {
			case "-R", "--dereference-recursive", "-L", "--follow":
				follow = true
			}
		}
		mark := len(a.an.Reads)
		for _, f := range operands {
			a.addRead(f, name, recursive)
		}
		for i := mark; recursive && i < len(a.an.Reads); i++ {
			if a.an.Reads[i].Recursive {
				// (A directory find names for {} is read whole: its own
				// -name filter goes too.)
				a.an.Reads[i].Include = include
				a.an.Reads[i].FollowLinks = follow
			}
		}
	}
	return "", hazard, true
}

// recursiveInclude returns the file name patterns a recursive grep or rg
// reads only (grep --include, rg -g/--glob/--iglob without "!"), nil when
// any file is read. Any exclusion is ignored: reading more is the safe side.
func recursiveInclude(name string, opts []parsedOpt) []string {
	var inc []string
	if name == "grep" {
		// A file matching no --include or --exclude is read unless the
		// first such option is --include: an --exclude first lets every
		// other file in.
		for _, o := range opts {
			if o.name == "--exclude" || o.name == "--exclude-from" {
				return nil
			}
			if o.name == "--include" {
				break
			}
		}
	}
	for _, o := range opts {
		v := o.val
		if v.dyn || v.glob && v.pat == "" {
			return nil
		}
		s := v.s
		if v.glob {
			s = v.pat
		}
		switch {
		case name == "grep" && o.name == "--include":
		case name == "rg" && (o.name == "--iglob" || o.name == "--glob-case-insensitive"):
			return nil // case-insensitive: not followed
		case name == "rg" && (o.name == "-g" || o.name == "--glob") && !strings.HasPrefix(s, "!"):
		case name == "rg" && (o.name == "-g" || o.name == "--glob"):
			continue
		default:
			continue
		}
		if s == "" || strings.ContainsAny(s, "/{}[\\") || strings.HasPrefix(s, "*") && strings.Contains(s[1:], "*") {
			return nil // a path glob or alternatives: not followed
		}
		inc = append(inc, s)
	}
	return inc
}

// inertCommands run nothing, write nothing and read no file whatever their
// arguments: a word only known at run time cannot change that.
func inertCommand(name string) bool {
	switch name {
	case "echo", "true", "false", ":", "pwd", "sleep", "exit", "return", "shift", "break", "continue", "wait",
		"basename", "dirname", "seq", "expr", "type", "which", "uname", "whoami", "id", "nproc", "tty", "yes",
		"ls", "stat", "df", "realpath", "readlink", "printenv", "dirs", "jobs", "times":
		return true
	}
	return false
}

// copyLike judges cp, install, mv and ln: the files they read (a copy,
// a move or a hard link gives a file's content another name) and the paths
// they write: the destination, and for each source the name it takes
// inside the destination when that is a directory, which the analysis
// cannot tell.
func (a *analyzer) copyLike(name string, role operandRole, opts []parsedOpt, operands []field, recursive bool) {
	var target *field
	noTarget, symbolic, dirs := false, false, false
	backup := "" // the suffix of the backups of files replaced
	for _, o := range opts {
		switch o.name {
		case "-b", "--backup":
			if backup == "" {
				backup = "~"
			}
		case "-S", "--suffix":
			backup = o.val.s
			if o.val.dyn {
				backup = Dyn
			}
		case "-t", "--target-directory":
			v := o.val
			target = &v
		case "-T", "--no-target-directory":
			noTarget = true
		case "-s", "--symbolic", "--symbolic-link":
			symbolic = name != "install" // install -s strips
		case "-d", "--directory":
			dirs = name == "install"
		}
	}
	if dirs {
		for _, f := range operands {
			a.writeTarget(name, f) // install -d makes each directory
		}
		return
	}
	sources := operands
	var dest field
	switch {
	case target != nil:
		dest = *target
	case len(operands) >= 2:
		dest, sources = operands[len(operands)-1], operands[:len(operands)-1]
	case len(operands) == 1 && role == opLink:
		dest = field{s: "."} // ln TARGET: a link of that name here
	default:
		return // no destination: nothing is copied
	}
	for _, src := range sources {
		if !symbolic {
			a.addRead(src, name, recursive)
		} else if !src.dyn && !dest.dyn {
			// A symbolic link gives its target a name that later reads
			// follow (a job started earlier too): the target is judged
			// as read. A relative target is relative to where the link
			// is: in DEST when it is a directory, else beside DEST.
			link := func(f field) {
				n := len(a.an.Reads)
				a.addRead(f, name+" -s", false)
				for i := n; i < len(a.an.Reads); i++ {
					a.an.Reads[i].Link = true
				}
			}
			if path.IsAbs(src.s) {
				link(src)
			} else {
				if target == nil || noTarget {
					link(field{s: path.Join(path.Dir(dest.s), src.s)})
				}
				if !noTarget {
					link(field{s: path.Join(dest.s, src.s)})
				}
			}
		}
		if role == opMove {
			a.writeTarget(name, src)
		}
	}
	if backup != "" {
		// A file replaced is kept under its name and the suffix (cp -b -S
		// .json a .claude/settings.local made settings.local.json).
		mark := len(a.an.Writes)
		defer func() {
			for _, w := range a.an.Writes[mark:len(a.an.Writes):len(a.an.Writes)] {
				w.Path += backup
				w.Dynamic = w.Dynamic || backup == Dyn
				a.an.Writes = append(a.an.Writes, w)
			}
		}()
	}
	a.writeTarget(name, dest)
	if noTarget || dest.dyn {
		return
	}
	into, ok := a.abs(dest.s)
	for _, src := range sources {
		n := len(a.an.Writes)
		base := path.Base(strings.TrimRight(src.s, "/"))
		if src.dyn || base == "/" || base == "." || base == ".." {
			a.writeTarget(name, field{s: dest.s + "/" + Dyn, dyn: true})
		} else {
			a.writeTarget(name, field{s: strings.TrimRight(dest.s, "/") + "/" + base})
		}
		if ok && len(a.an.Writes) > n {
			a.an.Writes[n].IntoDir = into
		}
	}
}

// extracts says why an archive command that writes the files named inside
// the archive (which the analysis does not read: .claude/settings.json, a
// hook script) is for a person; "" when it only lists or prints.
func extracts(name string, args []field) string {
	extract := false
	for i, f := range args {
		s := f.s
		switch {
		case name == "unzip" && strings.HasPrefix(s, "--"):
			// A second dash undoes an option (-l --l extracts).
			return "not understood: unzip with " + s + " (a second dash undoes an option)"
		case name == "unzip":
			// unzip extracts unless it lists, tests or prints.
			if strings.HasPrefix(s, "-") && strings.ContainsAny(s[1:], "lZtzvpc") && !slices.ContainsFunc(args, func(f field) bool { return strings.HasPrefix(f.s, "--") }) {
				return ""
			}
			extract = true
		case name == "7z" || name == "7za":
			if i == 0 && (s == "x" || s == "e") {
				extract = true
			}
		case s == "--extract" || s == "--get" || strings.HasPrefix(s, "--ext") || s == "-i" && name == "cpio" || strings.HasPrefix(s, "--to-stdout") || strings.HasPrefix(s, "--to-s"):
			if strings.HasPrefix(s, "--to-s") {
				return "" // tar -O: printed, not written
			}
			extract = true
		case strings.HasPrefix(s, "--"):
		case strings.HasPrefix(s, "-") || i == 0 && name != "cpio":
			// Short options, bundled; tar's first word may omit the dash.
			if strings.ContainsRune(s, 'O') && name != "cpio" {
				return ""
			}
			if strings.ContainsRune(s, 'x') || name == "cpio" && strings.ContainsRune(s, 'i') {
				extract = true
			}
		}
	}
	if !extract {
		return ""
	}
	return "not understood: " + name + " writes the files named inside the archive, which the analysis does not read"
}

// compressors and the suffix each writes.
var compressorSuffix = map[string]string{"gzip": ".gz", "xz": ".xz", "bzip2": ".bz2", "zstd": ".zst", "lz4": ".lz4", "compress": ".Z"}

// compressor judges gzip and its kin. Every word that is not an option is
// taken as a file read (gzip .env makes a readable .env.gz) and, unless
// the output goes to stdout (-c, -t, -l, zcat), as written: itself
// (removed, or an output named by -o or lz4's second operand), with the
// suffix added, and with a suffix taken off (gunzip X.gz writes X; -S
// names the suffix). It reports whether it judged the command.
func (a *analyzer) compressor(name string, args []field) bool {
	stdout, recursive := name == "zcat", false
	base := strings.TrimPrefix(strings.TrimPrefix(name, "un"), "g")
	if name == "gunzip" || name == "zcat" {
		base = "gzip"
	}
	suffixes := []string{compressorSuffix[base], ".gz", ".xz", ".bz2", ".zst", ".lz4", ".Z", ".tgz", ".taz"}
	known := len(suffixes) // -S adds its own after these
	var files []field
	for i := 0; i < len(args); i++ {
		f := args[i]
		switch {
		case f.s == "--":
		case f.s == "-S" || f.s == "--suffix" || strings.HasPrefix(f.s, "--suf") && !strings.Contains(f.s, "="):
			if i+1 < len(args) {
				i++
				suffixes = append(suffixes, args[i].s)
			}
		case strings.HasPrefix(f.s, "-S"):
			suffixes = append(suffixes, f.s[2:])
		case strings.HasPrefix(f.s, "--suf") && strings.Contains(f.s, "="):
			_, v, _ := strings.Cut(f.s, "=")
			suffixes = append(suffixes, v)
		case strings.HasPrefix(f.s, "--"):
			if strings.HasPrefix("--stdout", f.s) && len(f.s) > 3 || strings.HasPrefix("--to-stdout", f.s) && len(f.s) > 4 ||
				strings.HasPrefix("--test", f.s) && len(f.s) > 3 || strings.HasPrefix("--list", f.s) && len(f.s) > 3 {
				stdout = true
			}
			if v, ok := strings.CutPrefix(f.s, "--output="); ok {
				files = append(files, field{s: v})
			}
			recursive = recursive || f.s == "--recursive" || strings.HasPrefix("--recursive", f.s) && len(f.s) > 4
		case strings.HasPrefix(f.s, "-") && len(f.s) > 1:
			if strings.ContainsAny(f.s, "ctl") && name != "zstd" && name != "lz4" {
				stdout = true
			}
			recursive = recursive || strings.ContainsRune(f.s, 'r')
		default:
			files = append(files, f)
		}
	}
	for _, f := range files {
		a.addRead(f, name, recursive) // -r: every file below a directory
		if !f.dyn && !f.glob {
			// Decompressing a name that is not there, gzip and its kin try
			// it with each suffix they know (-S first): zcat -f -S v .en
			// printed .env.
			for _, suf := range append(suffixes, "-gz", ".z", "-z", "_z") {
				if suf != "" {
					a.addRead(field{s: f.s + suf}, name, false)
				}
			}
		}
		if stdout {
			continue
		}
		if f.dyn || f.glob {
			a.writeTarget(name, field{s: f.s + Dyn, dyn: true})
			continue
		}
		a.writeTarget(name, f)
		a.writeTarget(name, field{s: f.s + suffixes[0]})
		for _, suf := range suffixes[known:] {
			a.writeTarget(name, field{s: f.s + suf})
		}
		seen := map[string]bool{}
		for _, suf := range suffixes[1:] {
			if out, ok := strings.CutSuffix(f.s, suf); ok && suf != "" && out != "" && !seen[out] {
				seen[out] = true
				if suf == ".tgz" || suf == ".taz" {
					out += ".tar"
				}
				a.writeTarget(name, field{s: out})
			}
		}
	}
	return true
}

// archives judges tar creating an archive (c, r, u): every operand goes
// into it, directories whole, to be unpacked or printed elsewhere. The
// values of -f, -C, -T and -X are not operands. It reports whether it
// judged the command.
func (a *analyzer) archives(name string, args []field) bool {
	create := false
	for i, f := range args {
		s := f.s
		if strings.HasPrefix(s, "--") {
			create = create || s == "--create" || s == "--append" || s == "--update" || strings.HasPrefix(s, "--cr")
			continue
		}
		if strings.HasPrefix(s, "-") || i == 0 {
			// Mode letters only up to a letter that takes the rest of the
			// word as its value (-Tserver.key is -T server.key).
			for _, c := range strings.TrimPrefix(s, "-") {
				if strings.ContainsRune("cru", c) {
					create = true
				}
				if strings.ContainsRune("fCTXbgHKLNVI", c) && strings.HasPrefix(s, "-") {
					break
				}
			}
		}
	}
	if !create {
		return false
	}
	for _, f := range args {
		if f.s == "--files-from" || strings.HasPrefix(f.s, "--files-from=") || strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "--") && strings.Contains(f.s, "T") {
			// The names in the list go into the archive, unjudged.
			a.addRead(field{s: Dyn, dyn: true}, name+" -T", false)
		}
	}
	skip := false
	for i, f := range args {
		s := f.s
		switch {
		case skip:
			skip = false
		case strings.HasPrefix(s, "--"):
			if !strings.Contains(s, "=") && (s == "--file" || s == "--directory" || s == "--files-from" || s == "--exclude-from") {
				skip = true
			}
		case strings.HasPrefix(s, "-") || i == 0:
			// -f FILE, -C DIR, -T LIST, -X LIST take the next word
			// (bundled: tar -czf out.tgz).
			skip = strings.ContainsAny(s, "fCTX")
		default:
			a.addRead(f, name, true)
		}
	}
	return true
}

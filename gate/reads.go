package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"approvalbot/shell"
)

// ReadTool is the tool name whose rules judge what a shell command reads
// (`cat f`, `grep x f`, `< f` are judged as a Read of f).
const ReadTool = "Read"

// judgeRead judges one file a shell line reads, by the Read tool's rules.
func (s *evalState) judgeRead(r *shell.Read) { s.judgeReadAs(r, ReadTool) }

// judgeReadAs judges a read by the rules of tool (a search tool's own
// rules judge the files it searches).
func (s *evalState) judgeReadAs(r *shell.Read, tool string) {
	if c := cleanDots(r.Path); c != r.Path {
		// dir/. and dir/./x are dir and dir/x to every rule and walk.
		cp := *r
		cp.Path = c
		r = &cp
	}
	pt := part{v: Verdict{Kind: "read", Subject: r.Path}}
	defer func() { s.parts = append(s.parts, pt) }()
	if r.History {
		s.judgeHistory(&pt, r, tool)
		return
	}
	if r.GitIncludes {
		s.judgeGitIncludes(&pt, r)
		return
	}
	if r.Dynamic || strings.Contains(r.Path, shell.Dyn) {
		pt.v.Subject = strings.ReplaceAll(r.Path, shell.Dyn, "…")
		s.uncertain(&pt, "not understood: "+r.By+" reads a file only known at run time")
		return
	}
	if r.Recursive && !s.c.Remote && (strings.HasPrefix(r.By, "git diff") || strings.HasPrefix(r.By, "git grep") || r.By == "git status") {
		// git diff shows the whole work tree from a subdirectory, and a
		// pathspec :/ or :(top) names its top: judged from the top.
		if root, ok := workTreeRoot(r.Path); ok && root != r.Path {
			cp := *r
			cp.Path = root
			r = &cp
		}
	}
	if r.Link && !s.c.Remote {
		// Whatever writes through the link later (a job started before it
		// was made) writes here.
		if why, action := s.p.protectPath(filepath.Clean(r.Path), r.Path, s.cwd, KindWrite); action == Deny {
			pt.ref = RuleRef{Layer: LayerBuiltin, Action: Deny}
			pt.v.Decision, pt.v.Reason = Deny, "a link to "+r.Path+": "+why
			return
		} else if why != "" {
			s.uncertain(&pt, "a link to "+r.Path+": "+why)
			return
		}
	}
	if !s.hasRules(tool) && r.By == "$(< file)" {
		s.uncertain(&pt, "not understood: $(< "+r.Path+") reads a file with no command whose rules could allow it, and no Read rules say")
		return
	}
	if !s.hasRules(tool) {
		// A rules file that says nothing about reading leaves reads to the
		// rules of the command that reads; approvalbot's secrets stay denied.
		pt.v.Subject = r.Path
		why := s.p.secretPattern(r.Path, r.Recursive)
		if !r.Pattern && !r.Recursive {
			why, _ = s.p.protectPath(filepath.Clean(r.Path), r.Path, s.cwd, KindRead)
		}
		if why != "" {
			pt.ref = RuleRef{Layer: LayerBuiltin, Action: Deny}
			pt.v.Decision, pt.v.Reason = Deny, why
			return
		}
		if !r.Pattern && !r.Recursive && !s.c.Remote && hardLinks(filepath.Clean(r.Path)) > 1 {
			s.uncertain(&pt, "not understood: "+r.Path+" has other names (hard links); one may be a file approvalbot protects")
			return
		}
		pt.ref = RuleRef{Layer: LayerDefault, Action: Allow}
		pt.v.Decision, pt.v.Reason = Allow, "no Read rules: judged by the rules of "+r.By
		return
	}
	if !r.Pattern && !r.Recursive {
		s.judgePath(&pt, tool, r.Path, KindRead)
		return
	}
	if dotDotAfterName(r.Path) {
		// ".." in a pattern: resolve the directory part as the kernel
		// would; a ".." after a wildcard is not followed.
		cut := len(r.Path)
		if i := strings.IndexAny(r.Path, "*?["); i >= 0 {
			cut = strings.LastIndexByte(r.Path[:i], '/') + 1
		}
		dir, rest := r.Path[:cut], r.Path[cut:]
		ph := ""
		if !s.c.Remote {
			ph = physical(dir, s.cwd)
		}
		if ph == "" || strings.Contains("/"+rest+"/", "/../") {
			s.uncertain(&pt, "not understood: `"+r.Path+"` has a .. the gate cannot resolve")
			return
		}
		cp := *r
		cp.Path = strings.TrimSuffix(ph, "/") + "/" + rest
		if rest == "" {
			cp.Path = ph
		}
		r = &cp
	}
	subject := r.Path
	if r.Recursive && !r.Pattern {
		subject = strings.TrimSuffix(r.Path, "/") + "/**"
	}
	pt.v.Subject = subject
	if why := s.p.secretPattern(r.Path, r.Recursive); why != "" {
		pt.ref = RuleRef{Layer: LayerBuiltin, Action: Deny}
		pt.v.Decision, pt.v.Reason = Deny, why
		return
	}
	if !s.c.Remote && !s.staleDisk {
		// git's files are not in its work tree; ripgrep --hidden searches
		// .git too, but for its objects (named by hash, which no rule on
		// names meets).
		skipGit := noGit
		switch {
		case r.Tracked || r.Addable:
			skipGit = wholeGit
		case r.RgIgnore:
			skipGit = gitObjectsOnly
		}
		files, ok, why := listMatches(r.Path, r.Recursive, r.FollowLinks, r.SkipHidden, skipGit)
		if why != "" {
			s.uncertain(&pt, "not understood: `"+r.Path+"` "+why)
			return
		}
		if ok {
			if len(r.Include) > 0 && isDir(r.Path) {
				// Files named on the command line are read whatever
				// rg -g says; the filter applies to what a walk finds.
				files = included(files, r.Include)
			}
			if r.Tracked && r.Recursive {
				files = trackedOnly(r.Path, files)
			}
			if r.Addable && r.Recursive {
				files = gitAddable(r.Path, files)
			}
			if r.RgIgnore && r.Recursive {
				files = rgVisible(r.Path, files)
			}
			s.judgeMatches(&pt, r, files, tool)
			return
		}
	}
	if r.OptionRisk {
		s.uncertain(&pt, "not understood: `"+r.Path+"` may name a file that "+r.By+" would take as an option")
		return
	}
	ref, why := s.judgePattern(tool, r.Path, r.Recursive)
	pt.ref = ref
	pt.v.Decision, pt.v.Reason = ref.Action, why
	if ref.Action == Ask {
		pt.uncertain = true
	}
}

// cleanDots drops the "." elements and doubled slashes of a path, keeping
// ".." (which follows symbolic links where it stands) and any trailing
// "/" of a directory out.
func cleanDots(p string) string {
	if !strings.Contains(p, "/.") && !strings.Contains(p, "//") && !strings.HasPrefix(p, "./") {
		return p
	}
	abs := strings.HasPrefix(p, "/")
	var out []string
	for _, e := range strings.Split(p, "/") {
		if e == "" || e == "." {
			continue
		}
		out = append(out, e)
	}
	c := strings.Join(out, "/")
	if abs {
		c = "/" + c
	}
	if c == "" {
		c = "."
	}
	return c
}

// hasRules reports whether any static or agent rule applies to tool.
func (s *evalState) hasRules(tool string) bool {
	if len(s.p.staticFor(tool)) > 0 {
		return true
	}
	for _, r := range s.agentRules {
		if r.tool.match(tool) {
			return true
		}
	}
	return false
}

// judgeMatches judges a pattern or recursive read by the files it names
// on disk now: the strictest of their judgements.
func (s *evalState) judgeMatches(pt *part, r *shell.Read, files []string, tool string) {
	pt.ref = RuleRef{Layer: LayerDefault, Action: Allow}
	pt.v.Decision = Allow
	pt.v.Reason = fmt.Sprintf("every file it names now (%d) is allowed", len(files))
	var firstAllow *RuleRef
	for _, f := range files {
		if r.OptionRisk && strings.HasPrefix(filepath.Base(f), "-") {
			s.uncertain(pt, "not understood: `"+r.Path+"` names "+f+", which "+r.By+" would take as an option")
			return
		}
		var one part
		s.judgePath(&one, tool, f, KindRead)
		switch {
		case one.v.Decision == Deny:
			// A pattern that names a denied file asks: a person may see
			// that the line does not need it.
			pt.ref, pt.v.Decision = RuleRef{Layer: LayerShell, Action: Ask}, Ask
			pt.v.Reason = "not understood: it would also read " + f + ", which is " + one.v.Reason
			pt.uncertain = true
			return
		case one.v.Decision == Ask && pt.v.Decision == Allow:
			pt.ref, pt.v.Decision = one.ref, Ask
			pt.v.Reason = "it would read " + f + ": " + one.v.Reason
			pt.uncertain = one.uncertain
		case one.v.Decision == Allow && firstAllow == nil:
			ref := one.ref
			firstAllow = &ref
		}
	}
	if pt.v.Decision == Allow && firstAllow != nil {
		pt.ref = *firstAllow
	}
}

// included keeps the files whose name matches one of the patterns. A
// pattern that does not compile keeps every file.
func included(files, include []string) []string {
	out := files[:0:0]
	pats := make([]string, len(include))
	for i, pat := range include {
		// fnmatch's [!x] is Go's [^x]; a class ([[:alpha:]]) or a
		// collating element is not Go's: such a pattern names every file.
		pats[i] = strings.ReplaceAll(pat, "[!", "[^")
		if strings.Contains(pat, "[:") || strings.Contains(pat, "[=") || strings.Contains(pat, "[.") {
			pats[i] = "*"
		}
	}
	for _, f := range files {
		base := filepath.Base(f)
		for _, pat := range pats {
			if m, err := filepath.Match(pat, base); m || err != nil {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// isDir reports an existing directory.
func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// gitSkip says what of a .git directory a walk leaves out.
type gitSkip int

const (
	noGit          gitSkip = iota // nothing
	wholeGit                      // all of it (a work tree's files)
	gitObjectsOnly                // its objects (ripgrep --hidden)
)

// maxListed bounds the directory entries a pattern read may look at.
const maxListed = 20000

// listMatches returns the files on disk that a pathname pattern (or every
// file below a directory, when recursive) names; ok is false when they
// cannot be listed (no such directory here, too many entries). why says
// the pattern reaches through a symbolic link, where the walk cannot tell
// what bash (or grep -r, for its operands) would find. skipGit leaves out
// .git directories, which git grep, git diff and git add never read as
// files of the work tree.
func listMatches(pattern string, recursive, follow, skipHidden bool, skipGit gitSkip) (files []string, ok bool, why string) {
	if !filepath.IsAbs(pattern) {
		return nil, false, ""
	}
	isPattern := strings.ContainsAny(pattern, "*?[")
	prefix := pattern
	if i := strings.IndexAny(pattern, "*?[\\"); i >= 0 {
		prefix = pattern[:i]
		if j := strings.LastIndexByte(prefix, '/'); j >= 0 {
			prefix = prefix[:j+1]
		}
	}
	prefix = filepath.Clean(prefix)
	depth := -1
	if !recursive {
		depth = strings.Count(pattern, "/") - strings.Count(strings.TrimSuffix(prefix, "/"), "/")
	}
	toks := shellGlobToks(pattern, recursive)
	var below []globTok
	if recursive {
		// A name the pattern matches is read, and everything below it
		// when it is a directory (grep -r KEY *.key reads the key).
		toks = shellGlobToks(strings.TrimSuffix(pattern, "/"), false)
		below = shellGlobToks(strings.TrimSuffix(pattern, "/")+"/", true)
	}
	matches := func(p string) bool {
		l := literalToks(p)
		return intersects(toks, l) || below != nil && intersects(below, l)
	}
	// Nothing there is not "nothing read": the agent may run on another
	// machine (through a tunnel that looks local), so only what exists here
	// is listed.
	info, err := os.Stat(prefix) // a symlinked directory is listed too
	if err != nil {
		return nil, false, ""
	}
	if real, err := filepath.EvalSymlinks(prefix); err == nil && real != prefix {
		// Walk the directory the link leads to: the files are judged where
		// they are. The pattern below the prefix is matched from there.
		rest := strings.TrimPrefix(pattern, prefix)
		return listMatches(real+rest, recursive, follow, skipHidden, skipGit)
	}
	if !info.IsDir() {
		if matches(prefix) || recursive && prefix == filepath.Clean(pattern) {
			return []string{prefix}, true, ""
		}
		return nil, true, ""
	}
	var out []string
	n := 0
	base := strings.Count(prefix, "/")
	err = filepath.WalkDir(prefix, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n++
		if n > maxListed {
			return errTooMany
		}
		if skipGit != noGit && d.IsDir() {
			if skipGit == wholeGit && d.Name() == ".git" || skipGit == gitObjectsOnly && d.Name() == "objects" && filepath.Base(filepath.Dir(p)) == ".git" {
				return filepath.SkipDir // git's own files are not in its work tree
			}
		}
		if skipHidden && p != prefix && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 && isPattern && (recursive || depth >= 0 && strings.Count(p, "/")-base < depth) {
			// bash globs through a symlinked directory in the middle of
			// a pattern, and grep -r follows a link its operands name.
			return errThroughLink
		}
		if d.Type()&fs.ModeSymlink != 0 && recursive {
			if follow {
				// grep -R and rg -L follow links inside the tree: a link
				// to a file is judged where it leads; a directory's is
				// not walked here.
				if t, err := filepath.EvalSymlinks(p); err == nil {
					if fi, err := os.Stat(t); err == nil && fi.Mode().IsRegular() {
						out = append(out, p, t)
						return nil
					}
				}
				return errTooMany
			}
			return nil // grep -r and rg do not follow them
		}
		if d.IsDir() {
			if depth >= 0 && p != prefix && strings.Count(p, "/")-base >= depth {
				// A directory the pattern itself names is an operand too.
				if matches(p) {
					out = append(out, p)
				}
				return filepath.SkipDir
			}
			return nil
		}
		if matches(p) {
			out = append(out, p)
		}
		return nil
	})
	if errors.Is(err, errThroughLink) {
		return nil, false, "reaches through a symbolic link (" + errThroughLink.Error() + ")"
	}
	if err != nil {
		return nil, false, ""
	}
	return out, true, ""
}

var (
	errTooMany     = errors.New("too many entries")
	errThroughLink = errors.New("where it leads is not listed")
)

// literalToks tokenizes a literal path.
func literalToks(p string) []globTok {
	out := make([]globTok, len(p))
	for i := 0; i < len(p); i++ {
		out[i] = globTok{c: p[i], kind: 'c'}
	}
	return out
}

// uncertain marks pt as an ask that only a person can answer.
func (s *evalState) uncertain(pt *part, why string) {
	pt.ref = RuleRef{Layer: LayerShell, Action: Ask}
	pt.v.Decision, pt.v.Reason = Ask, why
	pt.uncertain = true
}

// judgePattern judges a read of every file a pathname pattern may name
// (below it too, when recursive): allowed only when every rule that could
// match one of them allows, and a catch-all allow covers the rest.
func (s *evalState) judgePattern(tool, pattern string, recursive bool) (RuleRef, string) {
	toks := shellGlobToks(pattern, recursive)
	base := toks
	if i := strings.LastIndexByte(pattern, '/'); i >= 0 && !recursive {
		base = shellGlobToks(pattern[i+1:], false)
	}
	var rules []*rule
	if s.agentRules != nil {
		for _, r := range s.agentRules {
			if r.tool.match(tool) {
				rules = append(rules, r)
			}
		}
	}
	rules = append(rules, s.p.staticFor(tool)...)
	covered := false
	var allow *RuleRef
	for i := len(rules) - 1; i >= 0; i-- {
		r := rules[i]
		if !s.mayMatch(r, toks, base, recursive) {
			continue
		}
		switch r.ref.Action {
		case Deny:
			return RuleRef{Layer: LayerShell, Action: Ask},
				"not understood: `" + pattern + "` may name files that " + RefString(r.ref) + " denies"
		case Ask:
			return r.ref, "ask by " + RefString(r.ref) + " (for some of the files `" + pattern + "` may name)"
		}
		if allow == nil {
			ref := r.ref
			allow = &ref
		}
		if universal(r.pattern.src) || s.coversAll(r, pattern) {
			covered = true
			break
		}
	}
	if !covered || allow == nil {
		return RuleRef{Layer: LayerDefault, Action: Ask}, "no rule covers every file `" + pattern + "` may name"
	}
	return *allow, "allowed by " + RefString(*allow) + " (every file `" + pattern + "` may name)"
}

// coversAll reports whether rule r matches every path below (or named by)
// pattern: `./*` for a pattern inside the cwd, or a literal directory
// followed by `*`.
func (s *evalState) coversAll(r *rule, pattern string) bool {
	src := r.pattern.src
	if r.pattern.dotSlash {
		if s.cwd == "" {
			return false
		}
		src = glob0(s.cwd) + src[1:]
	}
	prefix, ok := strings.CutSuffix(src, "*")
	if !ok || hasMeta(prefix) || !strings.HasSuffix(prefix, "/") {
		return false
	}
	dir := strings.TrimSuffix(prefix, "/")
	return pattern == dir || strings.HasPrefix(pattern, prefix)
}

// universal reports a pattern that matches every path.
func universal(p string) bool {
	return strings.Trim(p, "*") == ""
}

// mayMatch reports whether rule r could match a path that toks names.
func (s *evalState) mayMatch(r *rule, toks, base []globTok, recursive bool) bool {
	src := r.pattern.src
	if r.pattern.dotSlash {
		if s.cwd == "" {
			return true
		}
		src = glob0(s.cwd) + src[1:]
	}
	alts, ok := ruleGlobToks(src)
	if !ok {
		return true
	}
	for _, alt := range alts {
		if intersects(toks, alt) {
			return true
		}
		if r.pattern.noSlash {
			if recursive {
				// Any name below: the rule's pattern as a last path element.
				return true
			}
			if intersects(base, alt) {
				return true
			}
		}
	}
	return false
}

// glob0 quotes a literal path for a rule pattern.
func glob0(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if strings.IndexByte(`*?[]{}\`, p[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// judgeNetwork judges a /dev/tcp or /dev/udp redirection: bash opens a
// socket. To the daemon (any loopback address) it is denied; elsewhere it
// asks, and only a person can answer.
func (s *evalState) judgeNetwork(target string) {
	pt := part{v: Verdict{Kind: "network", Subject: "/dev/" + strings.ReplaceAll(target, shell.Dyn, "…")}}
	host := ""
	if parts := strings.SplitN(target, "/", 3); len(parts) >= 2 {
		host = parts[1]
	}
	if target == shell.Dyn || strings.Contains(host, shell.Dyn) || loopbackHost(host) {
		pt.ref = RuleRef{Layer: LayerBuiltin, Action: Deny}
		pt.v.Decision = Deny
		pt.v.Reason = "a shell connection to this machine (" + pt.v.Subject + ") could reach approvalbot's own API"
		if target == shell.Dyn || strings.Contains(host, shell.Dyn) {
			pt.v.Decision, pt.ref.Action = Ask, Ask
			pt.ref.Layer = LayerShell
			pt.v.Reason = "not understood: a redirection to a path only known at run time may open a network connection"
			pt.uncertain = true
		}
		s.parts = append(s.parts, pt)
		return
	}
	s.uncertain(&pt, "not understood: a network connection from the shell ("+pt.v.Subject+")")
	s.parts = append(s.parts, pt)
}

// loopbackHost reports a host name or address of this machine.
func loopbackHost(h string) bool {
	h = strings.Trim(strings.ToLower(h), "[]")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "0" || h == "" {
		return true
	}
	ip := net.ParseIP(h)
	if ip == nil {
		// Other spellings bash's resolver accepts (127.1, 0x7f000001, a
		// decimal address) are treated as this machine.
		return strings.Trim(h, "0123456789.x") == "" || strings.HasPrefix(h, "0x")
	}
	return ip.IsLoopback() || ip.IsUnspecified()
}

// secretPattern reports a pattern or recursive read that may reach
// approvalbot's secrets (the data dir) or a process environment.
func (p *Policy) secretPattern(pattern string, recursive bool) string {
	// A recursive read names the path itself and what is below "path/"
	// (not "/p*": grep -r x /p reads nothing of /proc).
	named := [][]globTok{shellGlobToks(pattern, false)}
	if recursive {
		named = append(named, shellGlobToks(strings.TrimSuffix(pattern, "/")+"/", true))
	}
	for _, toks := range named {
		for _, sec := range p.secrets {
			alts, _ := ruleGlobToks(glob0(sec) + "*")
			for _, alt := range alts {
				if intersects(toks, alt) {
					return "reads of approvalbot's own data (" + sec + ") are denied"
				}
			}
		}
		for _, env := range []string{"/proc/*/environ", "/proc/*/task/*/environ"} {
			alts, _ := ruleGlobToks(env)
			if intersects(toks, alts[0]) {
				return "reads of a process environment (" + env + ") are denied"
			}
		}
	}
	return ""
}

// secretPath reports a file approvalbot never lets a shell or tool read.
func (p *Policy) secretPath(abs string) string {
	for _, sec := range p.secrets {
		if under(abs, sec) {
			return "reads of approvalbot's own data (" + sec + ") are denied"
		}
	}
	if m, _ := filepath.Match("/proc/*/environ", abs); m {
		return "reads of a process environment are denied"
	}
	if m, _ := filepath.Match("/proc/*/task/*/environ", abs); m {
		return "reads of a process environment are denied"
	}
	return ""
}

// readOnlyPrograms create no files (their writing options are judged as
// writes, which count on their own).
var readOnlyPrograms = map[string]bool{
	"cat": true, "grep": true, "egrep": true, "fgrep": true, "rg": true, "ls": true, "echo": true,
	"printf": true, "head": true, "tail": true, "wc": true, "true": true, "false": true, ":": true,
	"pwd": true, "cd": true, "test": true, "[": true, "[[": true, "sort": true, "uniq": true,
	"cut": true, "tr": true, "jq": true, "file": true, "stat": true, "du": true, "df": true,
	"date": true, "which": true, "type": true, "nl": true, "diff": true, "cmp": true, "comm": true,
	"find": true, "read": true, "xargs": true, "basename": true, "dirname": true, "realpath": true,
	"readlink": true, "sed": true, "awk": true, "tree": true, "sha256sum": true, "md5sum": true,
}

// readOnlyGit are git subcommands that create no files in the work tree.
var readOnlyGit = map[string]bool{
	"status": true, "diff": true, "log": true, "show": true, "grep": true, "blame": true,
	"rev-parse": true, "ls-files": true, "shortlog": true, "describe": true, "branch": true,
}

// mayCreateFiles reports whether a line may create or rename files before
// one of its pattern or recursive reads runs: it writes somewhere, or runs
// more than one command and one of them is not a plain reader. A glob or a
// directory walk is then judged by the rules (glob intersection), not by
// what the disk holds now (`touch ./-r; grep x * .` makes "*" name "-r").
func mayCreateFiles(a *shell.Analysis) bool {
	if len(a.Commands) == 1 && len(a.Commands[0].Argv) > 0 && a.Commands[0].Dynamic == "" {
		// One command writing only its own outputs (cp SRC DST): bash
		// expanded its words, and it reads its sources, before it writes.
		prog := filepath.Base(a.Commands[0].Argv[0])
		own := true
		for _, w := range a.Writes {
			own = own && w.Op == prog
		}
		if own {
			return false
		}
	}
	if len(a.Writes) > 0 {
		return true
	}
	if len(a.Commands) < 2 {
		return false
	}
	for _, c := range a.Commands {
		if len(c.Argv) == 0 || c.Dynamic != "" {
			return true
		}
		prog := filepath.Base(c.Argv[0])
		if prog == "git" && readOnlyGit[gitSubcommand(c.Argv)] {
			continue
		}
		if !readOnlyPrograms[prog] {
			return true
		}
	}
	return false
}

// judgeGitIncludes judges git config reading its own files: the files
// their includes name are read too (git config --list prints them).
func (s *evalState) judgeGitIncludes(pt *part, r *shell.Read) {
	pt.v.Subject = "the files git's configuration includes"
	if s.c.Remote {
		s.uncertain(pt, "not understood: git config reads the files its configuration includes, which cannot be checked from here for a call from another machine")
		return
	}
	common := ""
	if !r.Dynamic {
		if root, ok := workTreeRoot(r.Path); ok {
			_, common, _ = gitDirs(root)
		}
	}
	includes, _ := gitConfigIncludes(common, s.p.home)
	for _, inc := range includes {
		if what, ref, denied := s.readDenied(inc, "/"); denied {
			pt.v.Subject = what
			pt.ref = ref
			pt.v.Decision, pt.v.Reason = ref.Action, "git config reads "+what+", which its configuration includes: "+ruleReason(ref)
			return
		}
	}
	pt.ref = RuleRef{Layer: LayerDefault, Action: Allow}
	pt.v.Decision, pt.v.Reason = Allow, fmt.Sprintf("every file git's configuration includes (%d) is allowed", len(includes))
}

// judgeHistory judges a git command that prints files as committed: every
// path the repository's history holds counts as read, so a secret
// committed once and removed keeps the command from being allowed.
func (s *evalState) judgeHistory(pt *part, r *shell.Read, tool string) {
	pt.v.Subject = strings.ReplaceAll(r.Path, shell.Dyn, "…") + " (git history)"
	if r.Dynamic || strings.Contains(r.Path, shell.Dyn) {
		s.uncertain(pt, "not understood: "+r.By+" prints files from the history of a repository only known at run time")
		return
	}
	if !s.hasRules(tool) {
		pt.ref = RuleRef{Layer: LayerDefault, Action: Allow}
		pt.v.Decision, pt.v.Reason = Allow, "no Read rules: judged by the rules of "+r.By
		return
	}
	if s.c.Remote {
		s.uncertain(pt, "not understood: "+r.By+" prints files from git history, which cannot be checked from here for a call from another machine")
		return
	}
	// git diff and git grep take operands that name files as paths (the
	// work tree, judged as tracked reads); git log takes them as the
	// paths whose history it prints.
	files := len(r.Revisions) > 0 && (r.By == "git diff" || r.By == "git grep") && !r.Dashed
	for _, rev := range r.Revisions {
		if rev == "" || strings.HasPrefix(rev, ":") || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, "^~") ||
			strings.Contains(rev, "..") || strings.Contains(rev, "@{") {
			// :/REGEX, :PATH, standard input, an option, revision syntax
			// (^HEAD~2): objects, whatever the disk holds.
			files = false
		}
		p := rev
		if !filepath.IsAbs(p) {
			p = r.Path + "/" + p // as git's lstat reads it: not cleaned
		}
		if _, err := os.Lstat(p); err != nil {
			files = false
		}
	}
	if files {
		pt.ref = RuleRef{Layer: LayerDefault, Action: Allow}
		pt.v.Decision, pt.v.Reason = Allow, "its operands are files here, not revisions"
		return
	}
	root, ok := workTreeRoot(r.Path)
	if !ok {
		if _, found := gitRepo(r.Path); found || !isDir(r.Path) {
			s.uncertain(pt, "not understood: "+r.By+" prints files from the history of a repository whose objects cannot be read here")
			return
		}
		pt.ref = RuleRef{Layer: LayerDefault, Action: Allow}
		pt.v.Decision, pt.v.Reason = Allow, "no git repository here: nothing is printed"
		return
	}
	gitDir, common, ok := gitDirs(root)
	if !ok || gitDir != common {
		// A linked worktree's HEAD and index are its own, its objects
		// and refs the main repository's: not read together here.
		s.uncertain(pt, "not understood: "+r.By+" prints files from the history of "+root+", a linked worktree or a .git file this cannot follow")
		return
	}
	if exists(filepath.Join(root, ".gitmodules")) && strings.EqualFold(gitConfigSetting(common, s.p.home, "diff", "submodule"), "diff") {
		// diff.submodule=diff prints what changed inside submodules,
		// whose histories are not read here.
		s.uncertain(pt, "not understood: "+r.By+" prints the changes inside submodules too (diff.submodule = diff), whose histories are not judged")
		return
	}
	h, err := s.p.history.history(gitDir)
	if err != nil {
		s.uncertain(pt, "not understood: "+r.By+" prints files from the history of "+root+", which cannot be read here ("+err.Error()+")")
		return
	}
	for _, rev := range r.Revisions {
		if h.printsUnnamed(gitDir, rev) {
			name := "`" + rev + "`"
			if rev == "" {
				name = "an object name read from standard input"
			}
			s.uncertain(pt, "not understood: "+name+" may name a blob of "+root+" that no commit or tree names: which file it was cannot be told")
			return
		}
	}
	var firstAllow *RuleRef
	for _, p := range h.paths {
		ps, ok := resolvePath(filepath.Join(root, filepath.FromSlash(p)), s.cwd, s.p.home)
		if !ok {
			continue
		}
		subj := subject{path: &ps}
		ref := s.always(tool, &subj, s.judge(tool, &subj))
		if ref.Action != Allow {
			pt.ref, pt.v.Decision = RuleRef{Layer: LayerShell, Action: Ask}, Ask
			pt.v.Reason = "not understood: " + r.By + " may print files as committed, and the history of " + root + " holds " + p + ", which is " + ruleReason(ref)
			pt.uncertain = true
			return
		}
		if firstAllow == nil {
			firstAllow = &ref
		}
	}
	pt.ref = RuleRef{Layer: LayerDefault, Action: Allow}
	if firstAllow != nil {
		pt.ref = *firstAllow
	}
	pt.v.Decision = Allow
	pt.v.Reason = fmt.Sprintf("every file in the history of %s (%d) is allowed", root, len(h.paths))
}

// judgeArgsAsReads: a program the analysis has no table for may read any
// file named in its arguments (`xxd .env`, `docker compose --env-file
// .env`, `curl -d @.env`). One the Read rules deny makes the line ask: the
// rule that allows the program says nothing of what it reads.
func (s *evalState) judgeArgsAsReads(cmd *shell.Command) {
	if !cmd.Unmodeled || len(cmd.Argv) < 2 || !s.hasRules(ReadTool) {
		return
	}
	prog := filepath.Base(cmd.Argv[0])
	denied := func(abs string, ref RuleRef) {
		pt := part{v: Verdict{Kind: "read", Subject: abs}}
		s.uncertain(&pt, "not understood: "+prog+" is given "+abs+", which is "+ruleReason(ref)+"; which of its arguments "+prog+" reads is not known")
		s.parts = append(s.parts, pt)
	}
	// In a directory not known (after `cd x;`), a relative name is judged
	// as if at the root: rules on names still meet it.
	cwd := cmd.Cwd
	if cwd == "" {
		cwd = "/"
	}
	for i, pat := range cmd.Patterns {
		if i == 0 || pat == "" {
			continue
		}
		if !filepath.IsAbs(pat) {
			pat = "/" + pat
		}
		// Judged as a read of the pattern (the files it names now, or the
		// rules it may meet); only a denial counts here.
		mark := len(s.parts)
		s.judgeReadAs(&shell.Read{Path: pat, Pattern: true, By: prog}, ReadTool)
		pt := s.parts[mark]
		s.parts = s.parts[:mark]
		if pt.v.Decision != Allow && strings.Contains(pt.v.Reason, "denie") {
			pt.v.Reason = "not understood: " + prog + " is given `" + pat + "`: " + pt.v.Reason
			pt.ref, pt.v.Decision, pt.uncertain = RuleRef{Layer: LayerShell, Action: Ask}, Ask, true
			s.parts = append(s.parts, pt)
			return
		}
		// And as writes of the names it matches (rm -rf .gi? x.tmp), a
		// ".." before the pattern followed as the kernel does.
		if dotDotAfterName(pat) {
			cut := strings.LastIndexByte(pat[:max(strings.IndexAny(pat, "*?["), 0)], '/') + 1
			if ph := physical(pat[:cut], s.cwd); ph != "" && !s.c.Remote {
				pat = strings.TrimSuffix(ph, "/") + "/" + pat[cut:]
			} else {
				pat = filepath.Clean(pat)
			}
		}
		files, ok, _ := listMatches(pat, false, false, false, noGit)
		if !ok && cmd.Cwd != "" {
			files = []string{strings.TrimSuffix(pat[:strings.LastIndexByte(pat[:strings.IndexAny(pat, "*?[")+1], '/')+1], "/")}
		}
		for _, f := range files {
			if ps, ok := resolvePath(f, s.cwd, s.p.home); ok && s.argWrite(prog, &ps, s.realPath(ps.abs, ps.raw, s.cwd), f, true, cmd.Cwd) {
				return
			}
		}
	}
	for _, w := range cmd.Argv[1:] {
		pieces, whole := argPaths(w)
		for i, c := range pieces {
			if c == "" || strings.Contains(c, shell.Dyn) {
				continue
			}
			ps, ok := resolvePath(c, cwd, s.p.home)
			if !ok {
				continue
			}
			real := s.realPath(ps.abs, ps.raw, cwd)
			if what, ref, ok := s.readDeniedAt(&ps, real, cwd); ok {
				denied(what, ref)
				return
			}
			if s.argWrite(prog, &ps, real, c, i < whole, cmd.Cwd) {
				return
			}
		}
	}
}

// argWrite judges the path ps (the argument piece c) of a program with no
// table as one it may write: outside the project where the Write rules do
// not allow it, the paths no agent may write and the directories that hold
// them. It reports whether it added an ask.
func (s *evalState) argWrite(prog string, ps *pathSubject, real, c string, whole bool, cmdCwd string) bool {
	if why := s.outsideWrite(ps, c, whole, cmdCwd); why != "" {
		pt := part{v: Verdict{Kind: "write", Subject: ps.abs}}
		s.uncertain(&pt, "not understood: "+prog+" is given "+ps.abs+", outside the project, which it may write ("+why+")")
		s.parts = append(s.parts, pt)
		return true
	}
	// It may write it too (curl -o, go build -o, gzip), or a name made
	// from it (split PREFIX writes PREFIXaa...).
	why := s.writeProtected(ps.abs, real)
	if why == "" && (agentSettingsBelow(filepath.Dir(ps.abs)) || agentSettingsBelow(filepath.Dir(real))) {
		why = "a name made from it would sit beside an agent's settings in " + filepath.Dir(real)
	}
	if why == "" && (agentSettingsBelow(ps.abs) || agentSettingsBelow(real)) {
		why = "removing it would take an agent's settings in " + real + " with it"
	}
	if why != "" {
		pt := part{v: Verdict{Kind: "write", Subject: ps.abs}}
		s.uncertain(&pt, "not understood: "+prog+" is given "+ps.abs+", which it may write: "+why)
		s.parts = append(s.parts, pt)
		return true
	}
	return false
}

// outsideWrite says why a program with no table, given the path ps (the
// argument piece c), may not write it: it is outside the project (the
// call's directory, wherever a cd took the command) and the Write rules do
// not allow it there (`xxd README.md /tmp/x` writes /tmp/x), or it is
// relative to a directory not known. Only whole words, values after "="
// or "@" and glued option values count: the pieces around a ":" are as
// often a URL or an image name as a path.
func (s *evalState) outsideWrite(ps *pathSubject, c string, whole bool, cmdCwd string) string {
	if !whole || strings.Contains(c, "://") || ps.abs == "/dev/null" || s.cwd == "" {
		return ""
	}
	if cmdCwd == "" && !filepath.IsAbs(c) && !strings.HasPrefix(c, "~") {
		return "relative to a directory only known at run time"
	}
	if under(ps.abs, s.cwd) {
		return ""
	}
	pps, ok := resolvePath(ps.abs, s.cwd, s.p.home)
	if !ok {
		return ""
	}
	subj := subject{path: &pps}
	if ref := s.judge(WriteTool, &subj); ref.Action != Allow {
		return "a write there is " + ruleReason(ref)
	}
	return ""
}

// argPaths returns the paths an argument may name: itself unless it is an
// option, the value after "=" (--env-file=F, if=F), a value glued to a
// short option (-w@F, -sw@F: every tail of the bundle), after a leading "@"
// (curl -d @F), and last, from index whole on, either side of a ":"
// (docker -v F:/app/F).
func argPaths(w string) (out []string, whole int) {
	if !strings.HasPrefix(w, "-") {
		out = append(out, w)
	}
	if _, v, ok := strings.Cut(w, "="); ok {
		out = append(out, v)
	}
	if len(w) > 2 && w[0] == '-' && w[1] != '-' {
		for k := 2; k < len(w); k++ {
			out = append(out, w[k:])
		}
	}
	for _, c := range out {
		// curl -d @F, -F 'x=<F', -F 'x=@F;type=text/plain'
		if rest, ok := strings.CutPrefix(c, "@"); ok {
			out = append(out, rest)
			c = rest
		} else if rest, ok := strings.CutPrefix(c, "<"); ok {
			out = append(out, rest)
			c = rest
		}
		if head, _, ok := strings.Cut(c, ";"); ok {
			out = append(out, head)
		}
	}
	whole = len(out)
	for _, c := range out[:whole] {
		if a, b, ok := strings.Cut(c, ":"); ok {
			out = append(out, a, b)
		}
	}
	return out, whole
}

// secretFile reports a path (not a pattern) no agent may read:
// approvalbot's data, a process environment. secretPattern's test for one
// file, without building patterns.
func (p *Policy) secretFile(abs string) bool {
	for _, sec := range p.secrets {
		if under(abs, filepath.Clean(sec)) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(abs, "/proc/"); ok {
		// /proc/PID/environ, /proc/PID/task/TID/environ
		parts := strings.Split(rest, "/")
		return len(parts) == 2 && parts[1] == "environ" || len(parts) == 4 && parts[1] == "task" && parts[3] == "environ"
	}
	return false
}

// readDenied judges a path by the Read rules, and the file a symlink along
// it leads to; ok when either is denied, with what was denied.
func (s *evalState) readDenied(raw, cwd string) (string, RuleRef, bool) {
	ps, ok := resolvePath(raw, cwd, s.p.home)
	if !ok {
		return "", RuleRef{}, false
	}
	return s.readDeniedAt(&ps, s.realPath(ps.abs, ps.raw, cwd), cwd)
}

// readDeniedAt is readDenied for a resolved path and where it leads.
func (s *evalState) readDeniedAt(ps *pathSubject, real, cwd string) (string, RuleRef, bool) {
	// approvalbot's data, a process environment: whatever the rules say.
	for _, p := range [2]string{ps.abs, real} {
		if s.p.secretFile(p) {
			return p, RuleRef{Layer: LayerBuiltin, Action: Deny}, true
		}
	}
	subj := subject{path: ps}
	if s.mayDeny(ReadTool, &subj) {
		if ref := s.judge(ReadTool, &subj); ref.Action == Deny {
			return ps.abs, ref, true
		}
	}
	for _, other := range [2]string{real, s.folded(ps.abs)} {
		if other == "" || other == ps.abs {
			continue
		}
		if rps, ok := resolvePath(other, cwd, s.p.home); ok {
			rsubj := subject{path: &rps}
			if ref := s.judge(ReadTool, &rsubj); ref.Action == Deny {
				return ps.abs + " (as " + other + ")", ref, true
			}
		}
	}
	return "", RuleRef{}, false
}

// realPath is where abs leads on this machine (symlinks of its directory,
// memoized per call, and of the file itself); abs itself for a call from
// another machine. A raw path with ".." is resolved component by
// component, as the kernel does.
func (s *evalState) realPath(abs, raw, cwd string) string {
	if s.c.Remote {
		return abs
	}
	if strings.Contains(raw, "..") {
		if p := physical(abs, cwd); p != "" {
			return p
		}
		return abs
	}
	dir, base := filepath.Dir(abs), filepath.Base(abs)
	rd, ok := s.realDirs[dir]
	if !ok {
		rd.path = resolveExisting(dir)
		rd.exists = isDir(rd.path)
		if s.realDirs == nil {
			s.realDirs = make(map[string]realDir, 4)
		}
		s.realDirs[dir] = rd
	}
	p := filepath.Join(rd.path, base)
	if !rd.exists {
		return p // nothing below a missing directory is a link
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		if t := danglingTarget(p); t != "" {
			return t
		}
	}
	return p
}

// writeProtected says why abs, or where it leads, is a path no agent may
// write (agent settings and hook code, approvalbot's files, .git
// internals), "" when it is none: string checks on abs and real, where it
// leads.
func (s *evalState) writeProtected(abs, real string) string {
	for _, f := range [2]string{abs, real} {
		switch {
		case agentSettings(f):
			return "writes to an agent's hook settings (" + f + ") are denied"
		case agentCode(f):
			return "an agent loads " + f + " as hooks, plugins or MCP servers that run without asking the gate"
		case s.p.startupFile(f):
			return "shells, git, ssh, python or jq run " + f + " as code, or as settings that run programs, without asking the gate"
		case s.p.protectedBy(f) != "":
			return "writes to approvalbot's own files (" + s.p.protectedBy(f) + ") are denied"
		case gitInternal(f):
			return "writes into git's internals (" + f + ") can make later git commands run programs"
		}
	}
	return ""
}

package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gobwas/glob"

	"approvalbot/shell"
)

// Env is what an evaluation depends on besides the call and the policy.
type Env struct {
	// Mode is the agent's mode; "" means interactive.
	Mode Mode
	// Always holds the agent's Always rules; may be nil.
	Always *AlwaysSet
	// Now is the time Always rules' expiry is checked against.
	Now time.Time
}

// Evaluate decides a call. Each part of the call (every simple command and
// redirect write of a shell line, every path of a file tool, or the tool
// name) goes through the layers: builtin self-protection, then the agent and
// static layers (a deny from either is final; else the agent layer's match
// wins, else the static one's, else ask), then the Always rules (ask to
// allow, never more), then the shell analysis (dynamic parts and hazards
// turn allow into ask). Any deny denies the call; else any ask asks; else
// it is allowed. Last, the mode turns a remaining ask into deny (strict) or
// allow (approve_all).
//
// Evaluate is pure and safe for concurrent use. It never panics and fails
// closed: input it cannot understand asks, never allows.
func (p *Policy) Evaluate(c Call, env Env) (ev Evaluation) {
	kind := p.Kind(c.Tool)
	defer func() {
		if r := recover(); r != nil {
			ev = Evaluation{
				Decision: Ask,
				Kind:     kind,
				Reason:   fmt.Sprintf("internal error while evaluating the call (%v): a person must decide", r),
				Rule:     &RuleRef{Layer: LayerDefault, Action: Ask},
			}
			// approve_all must not wave an internal error through; strict
			// still denies.
			if env.Mode == ModeStrict {
				ev = applyMode(ev, env.Mode)
			}
		}
	}()
	s := evalState{p: p, c: &c, env: &env, kind: kind, cwd: cleanCwd(c.Cwd)}
	if c.Agent != "" {
		s.agentRules = p.agents[c.Agent]
	}
	switch {
	case c.Tool == "":
		s.failWhole("the call names no tool")
	case kind == KindShell:
		s.evalShell()
	case kind == KindRead || kind == KindWrite:
		s.evalPaths()
	default:
		s.evalName()
	}
	return applyMode(s.finish(), env.Mode)
}

// evalState accumulates the parts of one evaluation.
type evalState struct {
	// staleDisk: the line may create files before a pattern or recursive
	// read runs, so what is on disk now does not say what it reads.
	staleDisk  bool
	p          *Policy
	c          *Call
	env        *Env
	kind       ToolKind
	cwd        string
	agentRules []*rule

	parts []part
	// whole, when set, is a reason the whole call asks whatever its parts
	// say (unparseable input, a parse error, no command at all).
	whole    string
	outside  bool
	outPaths []string
	// gitRepos memoizes gitRepoHazard per directory within one call.
	gitRepos map[string]string
	// made lists what the line writes or creates (the targets of its
	// writes, the directories mkdir makes), absolute; unknown marks a
	// mkdir whose directory is not known.
	made        []string
	madeUnknown bool
	// gitByLine memoizes gitRepoByLine per directory within one call.
	gitByLine map[string]string
	// realDirs memoizes where a directory leads (symlinks resolved)
	// within one call: a long line names many files in few directories.
	realDirs map[string]realDir
	// gitIncludes holds, per repository (its common git directory), what
	// git's config includes or runs as hooks, read once per call.
	gitIncludes map[string]*gitIncludeSet
	// commonDirs memoizes the common git directory of the repository
	// holding each directory ("" for none).
	commonDirs map[string]string
	// folds memoizes whether the file system folds case, per directory.
	folds map[string]bool
	// imported holds what the agent's memory files import (nil until
	// needed).
	imported map[string]bool
	// linkMade lists what the line's ln, cp, mv ... make: maybe links;
	// intoDir the DEST/SRC those write into a directory DEST.
	linkMade, intoDir []string
}

// realDir is where a directory leads, and whether it is there.
type realDir struct {
	path   string
	exists bool
}

// part is one judged piece of a call.
type part struct {
	v   Verdict
	ref RuleRef
	// What the Always button would save for this part; fixable is false
	// when the part asks for a reason no Always rule can lift (a dynamic
	// command, a hazard, an unresolvable path).
	alwaysTool, alwaysPattern string
	fixable                   bool
	// uncertain marks an ask that comes from the analysis, not from a rule
	// (something not understood, a hazard, a protected or dynamic target):
	// no Always rule or mode answers it, only a person.
	uncertain bool
	// hazardOnly marks an uncertain part that an exact Always rule may
	// still answer (a hazard, not something not understood).
	hazardOnly bool
}

func (s *evalState) failWhole(why string) {
	if s.whole == "" {
		s.whole = why
	}
}

// judge runs the agent and static layers for one subject.
func (s *evalState) judge(tool string, subj *subject) RuleRef {
	var a *rule
	if s.agentRules != nil {
		a = lastMatch(s.agentRules, tool, subj)
	}
	st := lastPatternMatch(s.p.staticFor(tool), subj)
	switch {
	case a != nil && a.ref.Action == Deny:
		return a.ref
	case st != nil && st.ref.Action == Deny:
		return st.ref
	case a != nil:
		return a.ref
	case st != nil:
		return st.ref
	}
	return RuleRef{Layer: LayerDefault, Action: Ask}
}

// mayDeny reports whether a deny rule for tool matches subj: without one,
// judge cannot deny (the last match decides, and Always rules only turn
// asks into allows). It matches the deny rules alone, which are few.
func (s *evalState) mayDeny(tool string, subj *subject) bool {
	for _, r := range s.p.staticFor(tool) {
		if r.ref.Action == Deny && r.matches(subj) {
			return true
		}
	}
	for _, r := range s.agentRules {
		if r.ref.Action == Deny && r.tool.match(tool) && r.matches(subj) {
			return true
		}
	}
	return false
}

// always runs the always layer on an ask: the matching Always rule's ref, or
// the ask unchanged.
func (s *evalState) always(tool string, subj *subject, ref RuleRef) RuleRef {
	if ref.Action != Ask || s.env.Always == nil {
		return ref
	}
	r := s.env.Always.match(s.c, tool, subj, s.env.Now)
	if r == nil {
		return ref
	}
	return RuleRef{Layer: LayerAlways, Tool: r.Tool, Pattern: r.Pattern, Action: Allow, ID: r.ID}
}

// ruleReason explains a rule-layer decision.
func ruleReason(ref RuleRef) string {
	switch ref.Layer {
	case LayerDefault:
		return "no rule matches"
	case LayerAlways:
		return "allowed by an Always rule (" + ref.Tool + ": " + ref.Pattern + ")"
	}
	var verb string
	switch ref.Action {
	case Allow:
		verb = "allowed by "
	case Deny:
		verb = "denied by "
	default:
		verb = "ask by "
	}
	var b strings.Builder
	b.Grow(len(verb) + refStringLen(ref))
	b.WriteString(verb)
	writeRef(&b, ref)
	return b.String()
}

// RefString renders a rule reference as `file:line (tool: pattern)`.
func RefString(ref RuleRef) string {
	var b strings.Builder
	b.Grow(refStringLen(ref))
	writeRef(&b, ref)
	return b.String()
}

// refStringLen is an upper bound of RefString's length, so it is built in
// one allocation (evaluation is on every tool call's path).
func refStringLen(ref RuleRef) int {
	return len(ref.File) + len(ref.Layer) + len(ref.Tool) + len(ref.Pattern) + 24
}

// maxToolShown is the longest tool glob shown whole in explanations.
const maxToolShown = 32

func writeRef(b *strings.Builder, ref RuleRef) {
	switch {
	case ref.File != "" && ref.Line > 0:
		var num [20]byte
		b.WriteString(ref.File)
		b.WriteByte(':')
		b.Write(strconv.AppendInt(num[:0], int64(ref.Line), 10))
	case ref.File != "":
		b.WriteString(ref.File)
	default:
		b.WriteString(ref.Layer)
	}
	if ref.Tool != "" || ref.Pattern != "" {
		b.WriteString(" (")
		if len(ref.Tool) > maxToolShown {
			// A long tool list ({Bash,bash,shell,...}) would drown the
			// explanation; the RuleRef keeps it whole.
			b.WriteString(ref.Tool[:maxToolShown-4])
			b.WriteString("...}")
		} else {
			b.WriteString(ref.Tool)
		}
		if ref.Pattern != "" {
			b.WriteString(": ")
			b.WriteString(ref.Pattern)
		}
		b.WriteByte(')')
	}
}

// evalShell judges each command and redirect write of a shell line.
func (s *evalState) evalShell() {
	in, ok := decodeInput(s.c.Input)
	if !ok {
		s.failWhole("the tool input is not a JSON object")
		return
	}
	line, ok := shellCommand(in)
	if !ok {
		s.failWhole("the input has no command (a string or an argv array in `command` or `cmd`)")
		return
	}
	// Where the command starts: workdir (Codex, opencode), dir_path or
	// directory (Gemini CLI). Two that disagree cannot both be right.
	var wd string
	present := false
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"workdir", in.Workdir}, {"dir_path", in.DirPath}, {"directory", in.Directory}} {
		v, here, ok := rawString(f.raw)
		if !ok {
			s.failWhole("the input's `" + f.name + "` is not a string")
			return
		}
		if here && present && v != wd {
			s.failWhole("the input names two different directories to run in")
			return
		}
		if here {
			wd, present = v, true
		}
	}
	start := s.cwd
	if present && wd != "" {
		ps, ok := resolvePath(wd, s.cwd, s.p.home)
		if !ok {
			s.failWhole("cannot resolve the input's `workdir`")
			return
		}
		// The command starts there; the project (what `./*` rules and the
		// outside-project warning mean) stays the call's cwd.
		start = ps.abs
		if s.cwd == "" {
			s.cwd = start
		}
	}
	a := shell.Analyze(line, shell.Options{Cwd: start, Home: s.p.home})
	if a == nil {
		s.failWhole("the shell analysis gave no result")
		return
	}
	s.staleDisk = mayCreateFiles(a)
	if s.staleDisk {
		s.made, s.madeUnknown = madePaths(a)
	}
	for _, w := range a.Writes {
		// What ln, cp -s, mv ... make may be a symbolic link that a later
		// path in the line goes through (ln -s ~/.kube k && cat k/config).
		// (cp SRC DEST's own DEST/SRC is not a later path.)
		if op := strings.Fields(w.Op); len(op) > 0 && linkMakers[op[0]] && !w.Dynamic && filepath.IsAbs(w.Path) {
			if w.IntoDir != "" {
				s.intoDir = append(s.intoDir, filepath.Clean(w.Path))
				continue
			}
			s.linkMade = append(s.linkMade, filepath.Clean(w.Path))
		}
	}
	s.parts = make([]part, 0, len(a.Commands)+len(a.Writes)+len(a.Reads)+len(a.Network))
	for i := range a.Commands {
		s.judgeCommand(&a.Commands[i])
		s.judgeArgsAsReads(&a.Commands[i])
	}
	for i := range a.Writes {
		s.judgeWrite(&a.Writes[i])
	}
	for i := range a.Reads {
		s.judgeRead(&a.Reads[i])
	}
	for _, n := range a.Network {
		s.judgeNetwork(n)
	}
	if a.Unsafe != "" {
		s.failWhole(a.Unsafe)
	}
	if len(a.Commands) == 0 {
		s.failWhole("the command line runs no command")
	}
	// The analysis flags paths outside where the line started; the parts
	// judged above flagged those outside the project.
	s.outside = s.outside || a.OutsideProject
	s.outPaths = append(s.outPaths, a.OutsidePaths...)
}

// judgeCommand judges one simple command of a shell line.
func (s *evalState) judgeCommand(cmd *shell.Command) {
	tool := s.c.Tool
	pt := part{
		v: Verdict{Kind: "command", Subject: cmd.Text, Hazard: cmd.Hazard,
			Wrapper: cmd.Wrapper, Dynamic: cmd.Dynamic},
		alwaysTool:    tool,
		alwaysPattern: cmd.Always,
		fixable:       true,
	}
	cwd := cmd.Cwd
	if why, action := s.p.protectCommand(cmd, cwd); why != "" {
		switch {
		case action == Deny:
			pt.ref = RuleRef{Layer: LayerBuiltin, Action: Deny}
			pt.v.Decision, pt.v.Reason = Deny, why
		default:
			// Only a person may allow it; a rule may still deny it.
			if ref := s.judge(tool, &subject{text: cmd.Text}); ref.Action == Deny {
				pt.ref = ref
				pt.v.Decision, pt.v.Reason = Deny, ruleReason(ref)
				break
			}
			s.uncertain(&pt, why)
			pt.fixable = false
		}
		s.parts = append(s.parts, pt)
		return
	}
	if len(cmd.Argv) > 0 && filepath.Base(cmd.Argv[0]) == "git" && cmd.Dynamic == "" {
		// git diff outside a repository compares any two files.
		// (With an explicit --no-index the analysis already judged its
		// operands as reads.)
		diffFiles := gitSubcommand(cmd.Argv) == "diff" && gitOperands(cmd.Argv) && !hasNoIndex(cmd.Argv)
		dir := gitDir(cmd.Argv, cmd.Cwd)
		why := ""
		switch {
		case !s.c.Remote && (dir == "" || strings.Contains(dir, shell.Dyn)):
			// After `cd x;`, `cd -` or popd the directory is not known, so
			// neither is the repository (and its config) git would use.
			why = "git in a directory known only when it runs, so the repository it would use cannot be checked"
		case s.c.Remote:
			if diffFiles {
				why = "git diff with operands in a directory this machine cannot check (outside a repository it compares any files)"
			} else if dir != cmd.Cwd || s.cwd == "" || cmd.Cwd != s.cwd {
				// Elsewhere than the call's directory (git -C DIR, after
				// cd), the repository git would use there (a bare one
				// whose config runs programs) cannot be checked from here.
				why = "git in another directory on a machine this cannot check (the repository there may run programs)"
			}
		default:
			r, seen := s.gitRepos[dir]
			if !seen {
				hazard, found := gitRepo(dir)
				r = hazard
				if !found && diffFiles {
					r = "git diff outside a repository compares any two files"
				}
				if s.gitRepos == nil {
					s.gitRepos = make(map[string]string, 1)
				}
				s.gitRepos[dir] = r
			}
			why = r
			if why == "" && s.staleDisk {
				why = s.gitRepoByLine(dir)
			}
			if why == "" {
				why = s.gitTreeWrite(cmd.Argv, dir)
			}
			if why == "" {
				why = s.gitPathWrite(cmd.Argv, dir)
			}
			if why == "" {
				why = gitNotesPrinted(cmd.Argv, dir)
			}
		}
		{
			if why != "" {
				s.uncertain(&pt, "not understood: "+why)
				pt.fixable = false
				s.parts = append(s.parts, pt)
				return
			}
		}
	}
	subj := subject{text: cmd.Text}
	ref := s.judge(tool, &subj)
	reason := ""
	if cmd.Canon != "" && ref.Action != Deny {
		csubj := subject{text: cmd.Canon}
		if cref := s.judge(tool, &csubj); cref.Action == Deny || cref.Action == Allow && ref.Action != Allow {
			ref, subj = cref, csubj
			reason = ruleReason(cref) + " (as `" + cmd.Canon + "`)"
		}
	}
	// Other spellings of the command can deny, never allow.
	if ref.Action != Deny {
		for _, alt := range cmd.AltTexts {
			asub := subject{text: alt}
			if aref := s.judge(tool, &asub); aref.Action == Deny {
				ref = aref
				reason = ruleReason(aref) + " (as `" + alt + "`)"
				break
			}
		}
	}
	switch {
	case ref.Action == Deny:
	case cmd.Dynamic != "":
		ref = RuleRef{Layer: LayerShell, Action: Ask}
		reason = cmd.Dynamic
		if !strings.HasPrefix(reason, "not understood") {
			reason = "not understood: " + reason
		}
		pt.fixable, pt.uncertain = false, true
	default:
		ref = s.always(tool, &subj, ref)
		if cmd.Hazard != "" && ref.Action == Allow && literalPattern(ref.Pattern) {
			// A rule naming this exact command (an Always for it, say)
			// is a person's approval of exactly what runs.
			break
		}
		if cmd.Hazard != "" {
			if ref.Action == Allow {
				reason = "hazard: " + cmd.Hazard + " (" + ruleReason(ref) + " does not cover it)"
			} else {
				reason = "hazard: " + cmd.Hazard + " (" + ruleReason(ref) + ")"
			}
			ref = RuleRef{Layer: LayerShell, Action: Ask}
			pt.uncertain = true
			// Only an Always rule for this exact command can answer it.
			pt.fixable = literalPattern(cmd.Always)
			pt.hazardOnly = true
		}
	}
	if reason == "" {
		reason = ruleReason(ref)
	}
	pt.ref = ref
	pt.v.Decision, pt.v.Reason = ref.Action, reason
	s.parts = append(s.parts, pt)
}

// judgeWrite judges a redirect write as a write of its target by the Write
// tool's rules.
func (s *evalState) judgeWrite(w *shell.Write) {
	if w.IntoDir != "" && !s.c.Remote && !s.staleDisk && !strings.Contains(w.IntoDir, shell.Dyn) && !isDir(w.IntoDir) {
		return // cp's destination is not a directory here: DEST/SRC is not written
	}
	pt := part{v: Verdict{Kind: "write", Subject: w.Path}}
	if w.Dynamic || strings.Contains(w.Path, shell.Dyn) {
		pt.v.Subject = strings.ReplaceAll(w.Path, shell.Dyn, "…")
		s.uncertain(&pt, "not understood: the target of `"+w.Op+"` is only known at run time")
		s.parts = append(s.parts, pt)
		return
	}
	s.judgePath(&pt, WriteTool, w.Path, KindWrite)
	if pt.v.Decision != Deny && (memoryFile(w.Path) || s.importedByMemory(w.Path)) {
		// What a command writes there is not seen: an @import in it
		// would load a file into the agent's context.
		s.uncertain(&pt, "not understood: a command writes "+w.Path+", an agent's memory file whose @imports load files into its context")
	}
	s.parts = append(s.parts, pt)
}

// judgePath fills pt with the judgement of one path for tool.
func (s *evalState) judgePath(pt *part, tool, raw string, kind ToolKind) {
	ps, ok := resolvePath(raw, s.cwd, s.p.home)
	if !ok {
		s.uncertain(pt, "not understood: cannot resolve the path (relative in an unknown directory, ~ without a home, or ~user)")
		return
	}
	pt.v.Subject = ps.abs
	if why := s.throughMadeLink(ps.abs); why != "" {
		s.uncertain(pt, why)
		return
	}
	if s.c.Remote && dotDotAfterName(ps.raw) {
		// A ".." after a name leads where the agent's file system says
		// (a symlink), which this machine cannot see.
		s.uncertain(pt, "not understood: `"+raw+"` on another machine: a .. after a name may follow a symlink there")
		return
	}
	if s.cwd != "" && !ps.inside {
		s.outside = true
		s.outPaths = append(s.outPaths, ps.abs)
	}
	why, action := s.p.protectPath(ps.abs, ps.raw, s.cwd, kind)
	fp := s.folded(ps.abs)
	if why == "" && fp != "" {
		if why, action = s.p.protectPath(fp, fp, s.cwd, kind); why != "" {
			why += " (" + ps.abs + " is that file here: the file system folds case)"
		}
	}
	if why != "" {
		if action == Deny {
			pt.ref = RuleRef{Layer: LayerBuiltin, Action: Deny}
			pt.v.Decision, pt.v.Reason = Deny, why
			return
		}
		// A write into git's internals: only a person can answer, unless
		// a rule denies it outright.
		s.personOnly(pt, tool, &ps, why)
		return
	}
	if kind == KindWrite && !s.c.Remote {
		real := s.realPath(ps.abs, ps.raw, s.cwd)
		switch {
		case s.gitIncluded(ps.abs, real) || fp != "" && s.gitIncluded(fp, fp):
			s.personOnly(pt, tool, &ps, "writes "+real+", which git's config includes or runs as a hook (core.hooksPath): it would run programs through git")
			return
		case s.p.binDirFile(ps.abs) || s.p.binDirFile(real) || fp != "" && s.p.binDirFile(fp):
			// Written where programs are found by name, it would run in
			// place of one a rule allows.
			s.personOnly(pt, tool, &ps, "writes "+real+" among the programs run by name: it would run in place of one a rule allows")
			return
		}
	}
	subj := subject{path: &ps}
	ref := s.always(tool, &subj, s.judge(tool, &subj))
	reason := ruleReason(ref)
	// A symlink along the path: the file it reaches is judged too.
	if real := physical(ps.raw, s.cwd); real != "" && real != ps.abs && ref.Action != Deny {
		if rps, ok := resolvePath(real, s.cwd, s.p.home); ok {
			rsubj := subject{path: &rps}
			if rref := s.always(tool, &rsubj, s.judge(tool, &rsubj)); rank(rref.Action) > rank(ref.Action) {
				ref, reason = rref, ruleReason(rref)+" (as "+real+", where the path leads)"
			}
		}
	}
	if fp != "" && ref.Action != Deny {
		if fps, ok := resolvePath(fp, s.cwd, s.p.home); ok {
			fsubj := subject{path: &fps}
			if fref := s.always(tool, &fsubj, s.judge(tool, &fsubj)); rank(fref.Action) > rank(ref.Action) {
				ref, reason = fref, ruleReason(fref)+" (as "+fp+": the file system folds case)"
			}
		}
	}
	pt.ref = ref
	pt.v.Decision, pt.v.Reason = ref.Action, reason
	pt.alwaysTool, pt.alwaysPattern, pt.fixable = tool, glob.QuoteMeta(ps.abs), true
	if ref.Action == Allow && !s.c.Remote {
		if n := hardLinks(ps.abs); n > 1 {
			// The rules judge names; a file with another name may be a
			// protected one (`ln .env notes.txt`, or an agent's settings
			// linked into the project), which no walk finds.
			s.uncertain(pt, fmt.Sprintf("not understood: %s has %d names (hard links); another may be a file the rules protect", ps.abs, n))
			pt.fixable = false
		}
	}
}

// personOnly makes pt an ask only a person answers, for why, unless a rule
// denies the path outright.
func (s *evalState) personOnly(pt *part, tool string, ps *pathSubject, why string) {
	if ref := s.judge(tool, &subject{path: ps}); ref.Action == Deny {
		pt.ref = ref
		pt.v.Decision, pt.v.Reason = Deny, ruleReason(ref)
		return
	}
	s.uncertain(pt, why)
}

// evalPaths judges the path(s) of a read or write tool.
func (s *evalState) evalPaths() {
	in, ok := decodeInput(s.c.Input)
	if !ok {
		s.failWhole("the tool input is not a JSON object")
		return
	}
	paths, ok := inputPaths(in)
	if !ok {
		s.failWhole("not understood: a path field is not a string, or the patch has a header the gate does not read")
		return
	}
	if len(paths) == 0 {
		if !searchTools[s.c.Tool] || s.cwd == "" {
			s.failWhole("the input names no path")
			return
		}
		// Glob/Grep/LS without a path search the cwd.
		paths = []string{s.cwd}
	}
	s.parts = make([]part, 0, len(paths))
	for _, raw := range paths {
		pt := part{v: Verdict{Kind: "path", Subject: raw}}
		if jsTrim(raw) != raw {
			// Some agents trim a path, some do not: which file is meant
			// cannot be told (" /root/.bashrc" is not under the project).
			s.uncertain(&pt, "not understood: a path with white space around it, which an agent may trim")
			s.parts = append(s.parts, pt)
			continue
		}
		s.judgePath(&pt, s.c.Tool, raw, s.kind)
		s.parts = append(s.parts, pt)
		if s.kind == KindWrite && pt.v.Decision != Deny {
			s.judgeImports(raw)
		}
		if contentSearchTools[s.c.Tool] && pt.v.Decision != Deny {
			// A content search reads every file below its path: judged as
			// a recursive read, as `grep -r` in a shell would be.
			if ps, ok := resolvePath(raw, s.cwd, s.p.home); ok {
				// Claude Code's Grep and opencode's grep run ripgrep with
				// --hidden: hidden files are searched, what its ignore
				// rules leave out is not, unless a --glob (Claude's glob,
				// opencode's include) brings files back. Gemini CLI's
				// search is judged on every file.
				rg := s.c.Tool != "search_file_content" && len(in.Glob) == 0 && len(in.Include) == 0
				dir := ps.raw
				if s.c.Tool == "grep" && !s.c.Remote && !isDir(ps.abs) {
					// opencode searches the directory of a file it is given.
					dir = filepath.Dir(ps.abs)
				}
				// opencode runs rg --follow.
				s.judgeReadAs(&shell.Read{Path: dir, Recursive: true, RgIgnore: rg, FollowLinks: s.c.Tool == "grep", By: s.c.Tool}, s.c.Tool)
			}
		}
	}
}

// evalName judges a tool matched by its name alone.
func (s *evalState) evalName() {
	if raw := bytes.TrimSpace(s.c.Input); len(raw) > 0 && (raw[0] != '{' || !json.Valid(raw)) {
		s.failWhole("the tool input is not a JSON object")
		return
	}
	subj := subject{text: s.c.Tool}
	ref := s.always(s.c.Tool, &subj, s.judge(s.c.Tool, &subj))
	s.parts = []part{{
		v:          Verdict{Kind: "tool", Subject: s.c.Tool, Decision: ref.Action, Reason: ruleReason(ref)},
		ref:        ref,
		alwaysTool: s.c.Tool, alwaysPattern: "*", fixable: true,
	}}
	if typedIntoShell[s.c.Tool] && ref.Action != Deny {
		// The text goes to a shell (or the program it runs) as typed
		// input: a command line no analysis sees whole.
		s.uncertain(&s.parts[0], "not understood: "+s.c.Tool+" types its input into a running shell session")
		s.parts[0].fixable = false
		return
	}
	if s.c.Tool == "save_memory" && s.p.home != "" {
		// Gemini CLI appends the fact to ~/.gemini/GEMINI.md.
		if ps, ok := resolvePath(filepath.Join(s.p.home, ".gemini", "GEMINI.md"), "/", s.p.home); ok {
			s.judgeImportsInto(&ps)
		}
	}
	s.judgeInputPaths()
}

// linkMakers are the programs whose writes may be symbolic links.
var linkMakers = map[string]bool{"ln": true, "cp": true, "mv": true, "install": true, "rsync": true, "git": true}

// throughMadeLink says why abs may lead elsewhere than it reads: it lies
// below something the line makes with ln, cp, mv ..., which may be a link
// whose target the disk does not show yet.
func (s *evalState) throughMadeLink(abs string) string {
	if slices.Contains(s.intoDir, abs) {
		return ""
	}
	for _, m := range s.linkMade {
		if abs != m && under(abs, m) {
			return "not understood: " + abs + " lies below " + m + ", which the line makes and may be a symbolic link to anywhere"
		}
	}
	return ""
}

// typedIntoShell are tools that send text into a running shell session:
// Copilot CLI's write_bash, Codex's write_stdin.
var typedIntoShell = map[string]bool{"write_bash": true, "write_stdin": true}

// judgeInputPaths: a tool judged by its name (an MCP file server's
// read_file, Gemini's read_many_files) may read the files its input names
// under path-like keys. One the Read rules deny makes the call ask a
// person: a rule or an Always for the tool's name says nothing of it.
func (s *evalState) judgeInputPaths() {
	if !s.hasRules(ReadTool) {
		return
	}
	var in any
	if json.Unmarshal(s.c.Input, &in) != nil {
		return
	}
	cwd := s.cwd
	if cwd == "" {
		cwd = "/"
	}
	for _, p := range inputPathValues(in, false, 0) {
		if strings.ContainsAny(p, "*?[{(") {
			// (Gemini's glob also takes {a,b} and +(x), and ignores case.)
			// A pattern (read_many_files' include): which files it names
			// is the tool's own matching, which the gate does not follow.
			pt := part{v: Verdict{Kind: "read", Subject: p}}
			s.uncertain(&pt, "not understood: "+s.c.Tool+" is given the pattern "+p+", which may name files the Read rules deny")
			s.parts = append(s.parts, pt)
			return
		}
		raw := strings.TrimPrefix(p, "file://")
		names := []string{raw}
		if ps, ok := resolvePath(raw, cwd, s.p.home); ok && !s.c.Remote {
			// A tool that globs may match the name in any case (.ENV).
			if entries, err := os.ReadDir(filepath.Dir(ps.abs)); err == nil && len(entries) <= maxListed {
				for _, e := range entries {
					if e.Name() != ps.base && strings.EqualFold(e.Name(), ps.base) {
						names = append(names, filepath.Join(filepath.Dir(ps.abs), e.Name()))
					}
				}
			}
		}
		for _, n := range names {
			if what, ref, ok := s.readDenied(n, cwd); ok {
				pt := part{v: Verdict{Kind: "read", Subject: what}}
				s.uncertain(&pt, "not understood: "+s.c.Tool+" is given "+p+", which may name "+what+", which is "+ruleReason(ref))
				s.parts = append(s.parts, pt)
				return
			}
		}
		if ps, ok := resolvePath(raw, cwd, s.p.home); ok && !s.c.Remote && isDir(ps.abs) {
			// A directory: read_many_files reads what is below it.
			mark := len(s.parts)
			s.judgeReadAs(&shell.Read{Path: ps.abs, Recursive: true, By: s.c.Tool}, ReadTool)
			if pt := &s.parts[mark]; pt.v.Decision != Allow {
				s.uncertain(pt, "not understood: "+s.c.Tool+" is given the directory "+ps.abs+", and may read what is below it: "+strings.TrimPrefix(pt.v.Reason, "not understood: "))
				return
			}
			s.parts = s.parts[:mark]
		}
	}
}

// inputPathValues returns the strings of a decoded JSON input found under
// keys that name files (path, file, dir, uri, url, any case, nested up to
// a few levels), file:// URLs included.
func inputPathValues(v any, pathKey bool, depth int) []string {
	if depth > 6 {
		return nil
	}
	var out []string
	switch x := v.(type) {
	case string:
		if pathKey || strings.HasPrefix(x, "file://") {
			out = append(out, x)
		}
	case []any:
		for _, e := range x {
			out = append(out, inputPathValues(e, pathKey, depth+1)...)
		}
	case map[string]any:
		for k, e := range x {
			lk := strings.ToLower(k)
			// include: Gemini CLI's read_many_files takes its files there.
			isPath := strings.Contains(lk, "path") || strings.Contains(lk, "file") || strings.Contains(lk, "dir") ||
				strings.Contains(lk, "uri") || strings.Contains(lk, "url") || lk == "include"
			out = append(out, inputPathValues(e, isPath, depth+1)...)
		}
	}
	return out
}

// finish combines the parts: any deny denies; else a whole-call problem or
// any ask asks; else allow.
func (s *evalState) finish() Evaluation {
	ev := Evaluation{Kind: s.kind, OutsideProject: s.outside, OutsidePaths: s.outPaths}
	n := len(s.parts)
	if n > 0 {
		ev.Commands = make([]Verdict, n)
		refs := make([]RuleRef, n)
		for i := range s.parts {
			refs[i] = s.parts[i].ref
			ev.Commands[i] = s.parts[i].v
			ev.Commands[i].Rule = &refs[i]
		}
	}
	firstDeny, firstAsk := -1, -1
	for i := range ev.Commands {
		switch ev.Commands[i].Decision {
		case Deny:
			if firstDeny < 0 {
				firstDeny = i
			}
		case Allow:
		default:
			if firstAsk < 0 {
				firstAsk = i
			}
		}
	}
	switch {
	case firstDeny >= 0:
		v := &ev.Commands[firstDeny]
		ev.Decision, ev.Rule = Deny, v.Rule
		ev.Reason = "denied: " + subjectLabel(v) + ": " + v.Reason
	case s.whole != "":
		ev.Decision, ev.Uncertain = Ask, true
		ev.Rule = &RuleRef{Layer: LayerShell, Action: Ask}
		if s.kind != KindShell {
			ev.Rule.Layer = LayerDefault
		}
		ev.Reason = "ask: " + s.whole
	case firstAsk >= 0:
		v := &ev.Commands[firstAsk]
		ev.Decision, ev.Rule = Ask, v.Rule
		ev.Reason = "ask: " + subjectLabel(v) + ": " + v.Reason
		for i := range s.parts {
			if s.parts[i].uncertain && s.parts[i].v.Decision == Ask {
				ev.Uncertain = true
				if i != firstAsk {
					// Name the part only a person can answer first.
					u := &ev.Commands[i]
					ev.Rule = u.Rule
					ev.Reason = "ask: " + subjectLabel(u) + ": " + u.Reason
				}
				break
			}
		}
		ev.AlwaysRules = s.alwaysPatterns()
	case n == 0:
		// Unreachable by construction (no parts always sets whole), kept so
		// nothing empty can ever allow.
		ev.Decision = Ask
		ev.Rule = &RuleRef{Layer: LayerDefault, Action: Ask}
		ev.Reason = "ask: nothing to judge"
	default:
		ev.Decision, ev.Rule = Allow, ev.Commands[0].Rule
		if n == 1 {
			ev.Reason = "allowed: " + subjectLabel(&ev.Commands[0]) + ": " + ev.Commands[0].Reason
		} else {
			ev.Reason = "allowed: every part is allowed"
		}
	}
	for _, ap := range ev.AlwaysRules {
		ev.Always = append(ev.Always, ap.Pattern)
	}
	return ev
}

// subjectLabel names a verdict's subject for a reason sentence.
func subjectLabel(v *Verdict) string {
	subj := strings.ReplaceAll(v.Subject, shell.Dyn, "…")
	switch v.Kind {
	case "write":
		return "write to " + subj
	case "read":
		return "read of " + subj
	case "network":
		return "connection to " + subj
	case "tool":
		return "tool " + subj
	}
	return "`" + subj + "`"
}

// alwaysPatterns returns what the Always button would save for the parts
// that are not allowed yet, or nil when any of them cannot be lifted by an
// Always rule (then the button approves once).
func (s *evalState) alwaysPatterns() []AlwaysPattern {
	var out []AlwaysPattern
	var seen map[AlwaysPattern]bool // linear in the number of parts
	for i := range s.parts {
		pt := &s.parts[i]
		if pt.ref.Action == Allow {
			continue
		}
		if !pt.fixable || pt.uncertain && !pt.hazardOnly || pt.alwaysPattern == "" || strings.Contains(pt.alwaysPattern, shell.Dyn) {
			return nil
		}
		// The pattern must cover the very part it is offered for, or the
		// cascade after an Always would ask again.
		m, err := compilePattern(pt.alwaysPattern, "")
		if err != nil {
			return nil
		}
		if pt.v.Kind == "command" {
			if !m.match(pt.v.Subject) {
				return nil
			}
		}
		ap := AlwaysPattern{Tool: pt.alwaysTool, Pattern: pt.alwaysPattern}
		if seen == nil {
			seen = make(map[AlwaysPattern]bool, 4)
		}
		if !seen[ap] {
			seen[ap] = true
			out = append(out, ap)
		}
	}
	return out
}

// dotDotAfterName reports a ".." element that follows a name (so a symlink
// could change where it leads).
func dotDotAfterName(p string) bool {
	named := false
	for _, el := range strings.Split(p, "/") {
		switch el {
		case "", ".":
		case "..":
			if named {
				return true
			}
		default:
			named = true
		}
	}
	return false
}

// literalPattern reports a rule pattern without wildcards: it names one
// command exactly.
func literalPattern(p string) bool {
	if p == "" {
		return false
	}
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?', '[', ']', '{', '}':
			return false
		}
	}
	return true
}

// applyMode turns a remaining ask into deny (strict) or allow (approve_all).
// No mode touches a deny.
func applyMode(ev Evaluation, m Mode) Evaluation {
	if ev.Decision != Ask {
		return ev
	}
	switch m {
	case ModeStrict:
		ev.Decision = Deny
		ev.Reason = "strict mode: " + ev.Reason
		ev.Rule = &RuleRef{Layer: LayerMode, Pattern: string(ModeStrict), Action: Deny}
		ev.Always, ev.AlwaysRules = nil, nil
	case ModeApproveAll:
		if ev.Uncertain {
			// approve_all answers asks that come from rules; what the
			// analysis did not understand always goes to a person.
			ev.Reason += " (approve_all does not answer this: a person must)"
			return ev
		}
		ev.Decision = Allow
		ev.Reason = "approve_all mode: " + ev.Reason
		ev.Rule = &RuleRef{Layer: LayerMode, Pattern: string(ModeApproveAll), Action: Allow}
		ev.Always, ev.AlwaysRules = nil, nil
	}
	return ev
}

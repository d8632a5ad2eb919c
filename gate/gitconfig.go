package gate

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// maxGitIncludes bounds the files gitConfigIncludes follows.
const maxGitIncludes = 32

// gitConfigIncludes returns the files git reads as configuration beyond its
// own ones, for a repository whose common git directory is common ("" for
// none) and a home: every include.path and includeIf.*.path of the global
// and repository config files, followed the way git does (relative to the
// including file, ~/ from home). Conditions are not weighed: an includeIf
// counts whether or not it applies. A file the agent may write there would
// run programs through git's config (core.fsmonitor), and `git config
// --list` prints it. hooks are the core.hooksPath directories they name
// (husky's .husky): a script there runs on the next commit.
func gitConfigIncludes(common, home string) (includes, hooks []string) {
	var roots []string
	if home != "" {
		roots = append(roots, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	if common != "" {
		roots = append(roots, filepath.Join(common, "config"), filepath.Join(common, "config.worktree"))
	}
	roots = append(roots, "/etc/gitconfig")
	seen := map[string]bool{}
	queue := roots
	for len(queue) > 0 && len(seen) < maxGitIncludes {
		f := queue[0]
		queue = queue[1:]
		if seen[f] {
			continue
		}
		seen[f] = true
		incs, hs := gitIncludePaths(f, home)
		hooks = append(hooks, hs...)
		for _, inc := range incs {
			if !seen[inc] {
				includes = append(includes, inc)
				queue = append(queue, inc)
			}
		}
	}
	return includes, hooks
}

// gitIncludePaths reads one git config file for the paths of its include
// and includeIf sections, and its core.hooksPath. A relative hooksPath is
// taken from the repository's top, which is where git runs hooks; it is
// judged from the including file's directory too.
func gitIncludePaths(file, home string) (out, hooks []string) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		for strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") && sc.Scan() {
			line = line[:len(line)-1] + sc.Text() // a value continued on the next line
		}
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimSpace(line[1:end]), " ")
			section = strings.ToLower(name)
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		hook := section == "core" && key == "hookspath"
		if !hook && (section != "include" && section != "includeif" || key != "path") {
			continue
		}
		p, ok := gitConfigValue(val)
		if !ok {
			continue
		}
		switch {
		case p == "":
			continue
		case p == "~" || strings.HasPrefix(p, "~/"):
			if home == "" {
				continue
			}
			p = filepath.Join(home, p[1:])
		case !filepath.IsAbs(p) && hook:
			// Relative to the top of the work tree: the config's
			// repository is two levels up (.git/config), or unknown.
			hooks = append(hooks, filepath.Join(filepath.Dir(filepath.Dir(file)), p))
			p = filepath.Join(filepath.Dir(file), p)
		case !filepath.IsAbs(p):
			p = filepath.Join(filepath.Dir(file), p)
		}
		if hook {
			hooks = append(hooks, filepath.Clean(p))
			continue
		}
		out = append(out, filepath.Clean(p))
	}
	return out, hooks
}

// gitConfigValue reads a value as git does: quotes joined, backslash
// escapes, a ; or # outside quotes starting a comment, blanks around it
// dropped. ok is false for a value it cannot read (an open quote).
func gitConfigValue(v string) (string, bool) {
	var b strings.Builder
	quoted := false
	pending := "" // blanks kept only if more text follows
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
			continue
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			default:
				c = v[i]
			}
		case !quoted && (c == ';' || c == '#'):
			return b.String(), true
		case !quoted && (c == ' ' || c == '\t'):
			if b.Len() > 0 {
				pending += string(c)
			}
			continue
		}
		b.WriteString(pending)
		pending = ""
		b.WriteByte(c)
	}
	return b.String(), !quoted
}

// gitIncluded reports a path git reads as configuration through an
// include, or a hook in core.hooksPath, of the global config or of the
// repository at the call's directory or the one holding the path (a
// nested repository's config names its own).
func (s *evalState) gitIncluded(abs, real string) bool {
	for _, dir := range [...]string{s.cwd, filepath.Dir(abs), filepath.Dir(real)} {
		if dir == "" {
			continue
		}
		common, seen := s.commonDirs[dir]
		if !seen {
			// (Once per directory: a line writes many files in few.)
			if root, ok := workTreeRoot(dir); ok {
				_, common, _ = gitDirs(root)
			}
			if s.commonDirs == nil {
				s.commonDirs = map[string]string{}
			}
			s.commonDirs[dir] = common
		}
		inc := s.gitConfigOf(common)
		if inc.files[abs] || inc.files[real] {
			return true
		}
		for _, h := range inc.hooks {
			if under(abs, h) || under(real, h) {
				return true
			}
		}
	}
	return false
}

// gitIncludeSet is what one repository's config (with the global one)
// makes git read or run.
type gitIncludeSet struct {
	files map[string]bool
	hooks []string
}

// gitConfigOf reads the includes and hooks paths for the repository whose
// common git directory is common ("" for none), once per call.
func (s *evalState) gitConfigOf(common string) *gitIncludeSet {
	if inc, ok := s.gitIncludes[common]; ok {
		return inc
	}
	inc := &gitIncludeSet{files: map[string]bool{}}
	includes, hooks := gitConfigIncludes(common, s.p.home)
	for _, p := range includes {
		inc.files[p] = true
		if r, err := filepath.EvalSymlinks(p); err == nil {
			inc.files[r] = true
		}
	}
	for _, h := range hooks {
		inc.hooks = append(inc.hooks, h)
		if r, err := filepath.EvalSymlinks(h); err == nil {
			inc.hooks = append(inc.hooks, r)
		}
	}
	if s.gitIncludes == nil {
		s.gitIncludes = map[string]*gitIncludeSet{}
	}
	s.gitIncludes[common] = inc
	return inc
}

// gitConfigSetting returns the last value git's config files (global,
// repository, and what they include) give section.key, "" for none.
// Sections and keys are matched without case; subsections are not read.
func gitConfigSetting(common, home, section, key string) string {
	var files []string
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	if common != "" {
		files = append(files, filepath.Join(common, "config"))
	}
	includes, _ := gitConfigIncludes(common, home)
	files = append(append([]string{"/etc/gitconfig"}, files...), includes...)
	val := ""
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		cur := ""
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "[") {
				end := strings.IndexByte(line, ']')
				if end < 0 {
					continue
				}
				cur = strings.ToLower(strings.TrimSpace(line[1:end]))
				line = strings.TrimSpace(line[end+1:])
			}
			k, v, ok := strings.Cut(line, "=")
			if ok && cur == section && strings.EqualFold(strings.TrimSpace(k), key) {
				if v, ok := gitConfigValue(v); ok {
					val = v
				}
			}
		}
		f.Close()
	}
	return val
}

package shell

// jq: filters cannot run programs; the files it reads are judged.

import (
	"strings"
)

// jq judges jq: its filter cannot run programs; files it reads come from
// operands, -f, --rawfile and --slurpfile.
func (a *analyzer) jq(fs []field) (string, string) {
	p := programs()["jq"]
	args := fs[1:]
	haveFilter, positional := false, false
	for i := 0; i < len(args); i++ {
		f := args[i]
		// After --args, words are arguments, not files; options are still
		// options (jq goes on parsing them).
		if positional && haveFilter && !strings.HasPrefix(f.s, "-") && !f.dyn && !f.glob {
			continue // (jq 1.6 reads an option there too: a run-time word may be one)
		}
		if f.dyn || f.glob {
			if positional {
				return "not understood: a jq word only known at run time after --args", ""
			}
			if !haveFilter {
				return "not understood: a jq filter or option only known at run time", ""
			}
			a.addRead(f, "jq", false)
			continue
		}
		s := f.s
		switch {
		case s == "--arg" || s == "--argjson" || s == "--indent" || s == "--slurpfile" || s == "--rawfile" ||
			strings.HasPrefix(s, "--") && p.long[strings.TrimPrefix(s, "--")] == '=':
			// The values after it may not become more words.
			for j := i + 1; j < len(args) && j <= i+2; j++ {
				if why := splitValue(args[j], s, "jq"); why != "" {
					return "not understood: " + why, ""
				}
			}
		}
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
		case s == "--library-path" || strings.HasPrefix(s, "--library-path="):
			return "not understood: jq --library-path loads modules and data files", ""
		case strings.HasPrefix(s, "--"):
			name := strings.TrimPrefix(s, "--")
			k, ok := p.long[name]
			if !ok {
				return "not understood: jq option " + s, ""
			}
			if name == "from-file" {
				return "not understood: jq --from-file (a filter file may import modules and data files)", ""
			}
			if k == '=' && i+1 < len(args) {
				i++
			}
		case len(s) > 1 && s[0] == '-' && !(s[1] >= 'a' && s[1] <= 'z' || s[1] >= 'A' && s[1] <= 'Z'):
			// jq 1.6 takes -0 (a dash, then no letter) for the filter or a
			// file, later versions for an option.
			return "not understood: jq " + s + " (a filter, a file or an option, by jq's version)", ""
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				c := s[j]
				switch {
				case strings.IndexByte(p.short, c) >= 0:
				case c == 'L':
					return "not understood: jq -L loads modules and data files", ""
				case c == 'f':
					return "not understood: jq -f (a filter file may import modules and data files)", ""
				default:
					return "not understood: jq option -" + string(c), ""
				}
			}
		default:
			if !haveFilter {
				if strings.Contains(s, "import") || strings.Contains(s, "include") || strings.Contains(s, "modulemeta") {
					// modulemeta loads a module by name from the search path.
					return "not understood: a jq filter that imports modules or data files", ""
				}
				haveFilter = true
				continue
			}
			a.addRead(f, "jq", false)
		}
	}
	return "", ""
}

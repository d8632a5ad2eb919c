package shell

// go: the flags of the go command that run another program, read files
// the analysis does not see, or write where they are told. Go's flag
// package takes -name and --name, with the value after `=` or in the next
// word, and no abbreviations, so exact names are enough.

import (
	"strings"
)

// goRunsFlags run a program of the caller's choosing, or feed the
// compiler files or settings the analysis cannot judge.
var goRunsFlags = map[string]string{
	"exec":       "go -exec runs the program it names",
	"toolexec":   "go -toolexec runs the program it names",
	"vettool":    "go vet -vettool runs the program it names",
	"compiler":   "go -compiler picks the compiler that runs",
	"gccgoflags": "go -gccgoflags passes flags to gccgo",
	"overlay":    "go -overlay compiles files named inside a JSON file",
	"C":          "go -C runs go in another directory",
}

// goWriteFlags write the file (or, for directories, into the directory)
// their value names.
var goWriteFlags = map[string]bool{
	"o": true, "coverprofile": true, "cpuprofile": true, "memprofile": true, "blockprofile": true,
	"mutexprofile": true, "trace": true, "outputdir": true, "pkgdir": true, "modfile": true,
	"test.coverprofile": true, "test.cpuprofile": true, "test.memprofile": true, "test.blockprofile": true,
	"test.mutexprofile": true, "test.trace": true, "test.outputdir": true, "test.testlogfile": true,
	"test.gocoverdir": true, "test.fuzzcachedir": true,
}

// goCmd judges a go command line: flags that run programs are hazards,
// flags that write are writes of their files.
func (a *analyzer) goCmd(fs []field) (string, string) {
	args := fs[1:]
	if len(args) == 0 {
		return "", ""
	}
	sub := args[0].s
	switch sub {
	case "install":
		// Into GOBIN, or GOPATH/bin (~/go/bin): where programs are found
		// by name.
		if a.home != "" {
			a.writeTarget("go install", field{s: a.home + "/go/bin/" + Dyn, dyn: true})
		}
	case "clean":
		for _, f := range args[1:] {
			if strings.TrimLeft(f.s, "-") == "modcache" || strings.TrimLeft(f.s, "-") == "cache" || strings.TrimLeft(f.s, "-") == "fuzzcache" {
				return "", "go clean -" + strings.TrimLeft(f.s, "-") + " removes go's caches outside the project"
			}
		}
	}
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn || f.glob && strings.HasPrefix(f.pat, "-") {
			return "not understood: a word only known at run time in go's arguments (it could be a flag)", ""
		}
		s := f.s
		if !strings.HasPrefix(s, "-") || s == "-" || s == "--" || s == "-args" || s == "--args" {
			// Packages, the program's own arguments; after -args the test
			// binary's, whose -test.* flags still write. A word taken here
			// that go reads as a flag's value only makes this stricter.
			continue
		}
		// Every flag acted on takes a value, in the word or the next one.
		name, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(s, "-"), "-"), "=")
		valField := field{s: val}
		if !hasVal && (goWriteFlags[name] || goRunsFlags[name] != "" || goBuildFlags[name]) {
			if i+1 >= len(args) {
				break
			}
			i++
			valField = args[i]
			val = valField.s
		}
		if why := goRunsFlags[name]; why != "" {
			return "", why
		}
		if goWriteFlags[name] {
			a.writeTarget("go "+sub+" -"+name, valField)
			continue
		}
		if goBuildFlags[name] {
			if valField.dyn {
				return "not understood: go -" + name + " with a value only known at run time", ""
			}
			if why := goToolFlags(name, val); why != "" {
				return "", why
			}
		}
	}
	return "", ""
}

// goBuildFlags pass flags on to the compiler, assembler or linker.
var goBuildFlags = map[string]bool{"gcflags": true, "asmflags": true, "ldflags": true}

// goToolFlags says why the flags -gcflags, -asmflags or -ldflags pass on
// are a hazard: any but the everyday ones (-N -l -m -S -B -e for the
// compiler, -s -w -X NAME=VALUE -buildid for the linker) may name a
// program (-extld) or a file to write (-o, -cpuprofile, -tmpdir).
func goToolFlags(name, val string) string {
	// An optional package pattern: -gcflags=all=-N -l.
	if pat, rest, ok := strings.Cut(val, "="); ok && !strings.HasPrefix(pat, "-") && !strings.ContainsAny(pat, " '\"") {
		val = rest
	}
	if strings.ContainsAny(val, "'\"\\") {
		return "go -" + name + " with quoted flags"
	}
	words := strings.Fields(val)
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case name == "ldflags" && (w == "-s" || w == "-w"):
		case name == "ldflags" && w == "-X" && i+1 < len(words):
			i++
		case name == "ldflags" && (strings.HasPrefix(w, "-X=") || strings.HasPrefix(w, "-buildid=")):
		case name != "ldflags" && (w == "-N" || w == "-l" || w == "-m" || w == "-S" || w == "-B" || w == "-e" ||
			strings.HasPrefix(w, "-m=") || w == "-race"):
		default:
			return "go -" + name + " passes " + w + ", which may name a program to run or a file to write"
		}
	}
	return ""
}

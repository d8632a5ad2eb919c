package shell_test

import (
	"fmt"
	"strings"

	"approvalbot/shell"
)

// Analyze reports every simple command a line runs, in the order bash runs
// them, with what it did not understand.
func ExampleAnalyze() {
	an := shell.Analyze(`cd sub && grep -n TODO "$(git ls-files | head -1)" > todo.txt`,
		shell.Options{Cwd: "/work/p", Home: "/home/u"})
	for _, c := range an.Commands {
		line := fmt.Sprintf("%-16s cwd=%-11s %s", strings.ReplaceAll(c.Text, shell.Dyn, "…"), c.Cwd, c.Dynamic)
		fmt.Println(strings.TrimRight(line, " "))
	}
	for _, w := range an.Writes {
		fmt.Println("writes", w.Path)
	}
	// Output:
	// cd sub           cwd=/work/p
	// git ls-files     cwd=/work/p/sub
	// head -1          cwd=/work/p/sub
	// grep -n TODO …   cwd=/work/p/sub not understood: a word only known at run time in the arguments of grep (it could be an option)
	// writes /work/p/sub/todo.txt
}

// What the analysis does not understand is said, so the gate asks a person.
func ExampleAnalyze_notUnderstood() {
	for _, line := range []string{
		`sort --out=/tmp/x data.txt`,
		`x='a[$(touch /tmp/p)]'; echo $((x))`,
		`git -c core.pager='sh -c id' log`,
	} {
		an := shell.Analyze(line, shell.Options{Cwd: "/work/p"})
		why := an.Unsafe
		for _, c := range an.Commands {
			if why == "" {
				why = c.Dynamic + c.Hazard
			}
		}
		fmt.Println(why)
	}
	// Output:
	// writes a file (sort --output)
	// not understood: arithmetic on x, whose value is not a known integer
	// git -c sets configuration that can run programs
}

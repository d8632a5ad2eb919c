//go:build e2e

package bashdiff

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// An input line and where it came from.
type input struct {
	Line   string
	Origin string
}

// corpusLines reads the command lines of the shell cases corpus.
func corpusLines(t *testing.T) []input {
	t.Helper()
	const file = "../../shell/testdata/shell_cases.jsonl"
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	defer f.Close()
	var out []input
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c struct {
			ID      string `json:"id"`
			Command string `json:"command"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s:%d: %v", file, n, err)
		}
		out = append(out, input{c.Command, "corpus " + c.ID})
		if r := canaryfy(c.Command); r != c.Command {
			out = append(out, input{r, "corpus " + c.ID + " (canary)"})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no cases", file)
	}
	return out
}

// canaryfy points the corpus's payloads at the canary.
func canaryfy(s string) string {
	return strings.NewReplacer("/tmp/pwned", canary, "/tmp/pwn", canary, "rm -rf /tmp/x", "touch "+canary).Replace(s)
}

// fuzzLines reads the string arguments of the Go fuzz corpora of shell and
// gate (`go test fuzz v1`, then one Go literal per line).
func fuzzLines(t *testing.T) []input {
	t.Helper()
	var files []string
	for _, g := range []string{"../../shell/testdata/fuzz/*/*", "../../gate/testdata/fuzz/*/*"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	var out []input
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		if len(lines) == 0 || strings.TrimSpace(lines[0]) != "go test fuzz v1" {
			continue
		}
		for _, l := range lines[1:] {
			l = strings.TrimSpace(l)
			if !strings.HasPrefix(l, "string(") || !strings.HasSuffix(l, ")") {
				continue
			}
			v, err := strconv.Unquote(l[len("string(") : len(l)-1])
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			out = append(out, input{v, "fuzz " + filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file)})
		}
	}
	return out
}

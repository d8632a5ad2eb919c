//go:build e2e

package bashdiff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"approvalbot/config"
	"approvalbot/gate"
	"approvalbot/shell"
)

// Paths inside the jail (see jail/main.go); the analyzer and the gate see
// the same ones.
const (
	projDir = "/sandbox/proj"
	homeDir = "/sandbox/home"
	canary  = "/sandbox/pwned"
)

const (
	workers     = 2                // the CI machine has 2 cores
	lineTimeout = 10 * time.Second // per line (generous: CI machines are busy), then every process of the line is killed
	generated   = 10000            // generated lines per run
	seed        = 20240601         // fixed: every run checks the same lines
)

// jailRequest and jailResponse mirror jail/main.go's Request and Response.
type jailRequest struct {
	Line      []byte `json:"line"`
	TimeoutMS int    `json:"timeout_ms"`
}

type jailResponse struct {
	Trace                  []byte `json:"trace"`
	Stubs                  []byte `json:"stubs"`
	Stderr                 []byte `json:"stderr"`
	Exit                   int    `json:"exit"`
	TimedOut               bool   `json:"timed_out"`
	Canary                 bool   `json:"canary"`
	Err                    string `json:"err,omitempty"`
	ResetUS, RunUS, ReapUS int64
}

// allowEverything is the policy of the oracle: under it, ask means the
// analyzer did not understand the line, deny is built-in self-protection
// and allow claims full understanding.
func allowEverything(t *testing.T) *gate.Policy {
	t.Helper()
	spec, err := config.ParseRules("bashdiff-allow-all.jsonc", []byte(`{"*": "allow"}`), homeDir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := gate.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func evaluate(p *gate.Policy, line string) gate.Evaluation {
	in, _ := json.Marshal(map[string]string{"command": line})
	return p.Evaluate(gate.Call{Agent: "bashdiff", Tool: "Bash", Input: in, Cwd: projDir}, gate.Env{Now: time.Unix(1700000000, 0)})
}

// jail is one sandbox process (PID 1 of its namespaces) that runs lines.
type jail struct {
	cmd *exec.Cmd
	in  *json.Encoder
	out *bufio.Scanner
}

// buildJail compiles the jail and stub program once.
func buildJail(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bashdiff-jail")
	c := exec.Command("go", "build", "-tags", "e2e", "-o", bin, "./jail")
	c.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("building the jail: %v\n%s", err, out)
	}
	return bin
}

// startJail prepares dir (stubs/ with the program hard-linked under every
// stub name)
// and starts the jail in new user, mount, network and PID namespaces.
func startJail(t *testing.T, bin, dir string) *jail {
	t.Helper()
	stubs := filepath.Join(dir, "stubs")
	if err := os.MkdirAll(stubs, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(stubs, "bashdiff-jail")
	if err := os.WriteFile(self, data, 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := exec.Command(self, "names").Output()
	if err != nil {
		t.Fatalf("stub names: %v", err)
	}
	for _, n := range strings.Fields(string(names)) {
		if err := os.Link(self, filepath.Join(stubs, n)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(self, "serve", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		// Without namespaces the real bash would run attacker lines on
		// the host (as root in CI): refuse rather than fall back.
		t.Fatalf("starting the jail in new user/mount/net/pid namespaces: %v\n"+
			"this test needs unprivileged user namespaces (or root); it does not run lines outside a jail", err)
	}
	j := &jail{cmd: cmd, in: json.NewEncoder(stdin), out: bufio.NewScanner(stdout)}
	j.out.Buffer(make([]byte, 1<<20), 64<<20)
	r, err := j.read()
	if err != nil || r.Err != "ready" {
		j.stop()
		t.Fatalf("the jail did not start: %v %+v", err, r)
	}
	return j
}

func (j *jail) read() (jailResponse, error) {
	var r jailResponse
	if !j.out.Scan() {
		if err := j.out.Err(); err != nil {
			return r, err
		}
		return r, fmt.Errorf("the jail exited")
	}
	return r, json.Unmarshal(j.out.Bytes(), &r)
}

// run runs one line; a jail that does not answer in time is killed.
func (j *jail) run(line string) (jailResponse, error) {
	if err := j.in.Encode(jailRequest{Line: []byte(line), TimeoutMS: int(lineTimeout / time.Millisecond)}); err != nil {
		return jailResponse{}, err
	}
	guard := time.AfterFunc(lineTimeout+60*time.Second, func() { _ = j.cmd.Process.Kill() })
	defer guard.Stop()
	return j.read()
}

func (j *jail) stop() {
	_ = j.cmd.Process.Kill()
	_ = j.cmd.Wait()
}

// A line's outcome.
type result struct {
	in         input
	decision   gate.Action
	reason     string
	reps       []reported
	resp       jailResponse
	missing    []executed
	runErr     error
	stubBroken bool
}

func TestBashDiff(t *testing.T) {
	if testing.Short() {
		t.Skip("differential test against real bash: not in -short")
	}
	start := time.Now()
	tmp := t.TempDir()
	bin := buildJail(t, filepath.Join(tmp, "bin"))

	// Inputs: the corpus, the fuzz corpora, then the generator; each line
	// once, in a fixed order.
	var inputs []input
	seen := map[string]bool{}
	for _, in := range append(append(corpusLines(t), fuzzLines(t)...), generate(seed, generated)...) {
		if !seen[in.Line] {
			seen[in.Line] = true
			inputs = append(inputs, in)
		}
	}

	if only := os.Getenv("BASHDIFF_ONLY"); only != "" {
		re, err := regexp.Compile(only)
		if err != nil {
			t.Fatalf("BASHDIFF_ONLY: %v", err)
		}
		var kept []input
		for _, in := range inputs {
			if re.MatchString(in.Line) {
				kept = append(kept, in)
			}
		}
		inputs = kept
	}

	policy := allowEverything(t)
	results := make([]*result, len(inputs))
	var allowed []int
	counts := map[gate.Action]int{}
	for i, in := range inputs {
		ev := evaluate(policy, in.Line)
		counts[ev.Decision]++
		results[i] = &result{in: in, decision: ev.Decision, reason: ev.Reason}
		if os.Getenv("BASHDIFF_VERBOSE") != "" {
			t.Logf("%-5s %q (%s): %s", ev.Decision, in.Line, in.Origin, ev.Reason)
		}
		if ev.Decision == gate.Allow {
			allowed = append(allowed, i)
		}
	}

	// Run the allowed lines, two jails at a time.
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		j := startJail(t, bin, filepath.Join(tmp, fmt.Sprintf("w%d", w)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer j.stop()
			broken := false
			for i := range jobs {
				if broken {
					results[i].runErr = fmt.Errorf("jail broken by an earlier line")
					continue
				}
				r, err := j.run(inputs[i].Line)
				if err == nil && r.Err != "" {
					err = fmt.Errorf("jail: %s", r.Err)
				}
				results[i].resp, results[i].runErr = r, err
				if err != nil {
					broken = true
				}
			}
		}()
	}
	for _, i := range allowed {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	// Check, in input order.
	var violations, canaries, runErrors, timeouts int
	var report []string
	for _, i := range allowed {
		r := results[i]
		if r.runErr != nil {
			runErrors++
			t.Errorf("line %q (%s): could not run it: %v", r.in.Line, r.in.Origin, r.runErr)
			continue
		}
		if r.resp.TimedOut {
			timeouts++
			t.Logf("timed out after %s (what it ran until then is checked): %q", lineTimeout, r.in.Line)
		}
		an := shell.Analyze(r.in.Line, shell.Options{Cwd: projDir, Home: homeDir})
		r.reps = reportedOf(an)
		canaryRan := r.resp.Canary && !canaryExplained(an)
		if os.Getenv("BASHDIFF_VERBOSE") != "" {
			t.Logf("ran %q: exit %d (reset %dµs, run %dµs, leftovers %dµs)\ntrace:\n%s\nstubs: %q\nstderr: %s", r.in.Line, r.resp.Exit, r.resp.ResetUS, r.resp.RunUS, r.resp.ReapUS, r.resp.Trace, r.resp.Stubs, r.resp.Stderr)
		}
		stubs, ok := parseStubLog(r.resp.Stubs)
		r.stubBroken = !ok
		for _, e := range append(parseXtrace(r.resp.Trace), stubs...) {
			if !covered(e, r.reps) {
				r.missing = append(r.missing, e)
			}
		}
		if len(r.missing) == 0 && !canaryRan {
			continue
		}
		violations++
		var b strings.Builder
		fmt.Fprintf(&b, "VIOLATION: the gate allowed %q (%s), but bash ran commands the analyzer did not report\n", r.in.Line, r.in.Origin)
		if canaryRan {
			canaries++
			fmt.Fprintf(&b, "  CANARY: %s exists after the line ran: its payload executed\n", canary)
		}
		b.WriteString("  analyzer reported:\n")
		for _, rep := range r.reps {
			fmt.Fprintf(&b, "    %s\n", fmtArgv(rep.Argv, rep.Globs))
		}
		b.WriteString("  bash executed, not reported:\n")
		for _, e := range r.missing {
			fmt.Fprintf(&b, "    [%s] %s\n", e.From, fmtArgv(e.Argv, nil))
		}
		if r.stubBroken {
			b.WriteString("  (the stub log was malformed)\n")
		}
		fmt.Fprintf(&b, "  exit %d, timed out %v; stderr: %q", r.resp.Exit, r.resp.TimedOut, trim(string(r.resp.Stderr), 300))
		t.Error(b.String())
		report = append(report, fmt.Sprintf("%q\t# %s", r.in.Line, r.in.Origin))
	}
	if f := os.Getenv("BASHDIFF_VIOLATIONS"); f != "" {
		data := strings.Join(report, "\n")
		if data != "" {
			data += "\n"
		}
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Errorf("writing %s: %v", f, err)
		}
	}
	t.Logf("bashdiff: %d distinct lines evaluated (corpus, fuzz corpora, %d generated with seed %d, before deduplication): %d allowed, %d asked, %d denied; "+
		"%d allowed lines run in bash (%d timed out, %d could not run): %d violations (%d with the canary) in %s",
		len(inputs), generated, seed, counts[gate.Allow], counts[gate.Ask], counts[gate.Deny],
		len(allowed)-runErrors, timeouts, runErrors, violations, canaries, time.Since(start).Round(time.Second))
}

// canaryExplained reports whether the analysis accounts for the canary
// existing: a reported command or write names it (or has a dynamic word
// that may), so the line touched it in the open.
func canaryExplained(an *shell.Analysis) bool {
	for _, c := range an.Commands {
		for _, w := range c.Argv {
			if strings.Contains(w, "pwned") || strings.Contains(w, shell.Dyn) {
				return true
			}
		}
	}
	for _, w := range an.Writes {
		if w.Dynamic || strings.Contains(w.Path, "pwned") || strings.Contains(w.Path, shell.Dyn) {
			return true
		}
	}
	return false
}

func fmtArgv(argv []string, globs []bool) string {
	parts := make([]string, len(argv))
	for i, w := range argv {
		q := fmt.Sprintf("%q", w)
		if w == shell.Dyn {
			q = "<Dyn>"
		} else {
			q = strings.ReplaceAll(q, `\x00`, "<Dyn>")
		}
		if globs != nil && globs[i] {
			q += "(glob)"
		}
		parts[i] = q
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func trim(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

//go:build e2e

package agentse2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/e2e/e2etest"
	"approvalbot/gate"
)

// runTimeout bounds each agent run.
const runTimeout = 120 * time.Second

// hookTimeout is the hook's own deadline the tests install with (the
// hosts' timeouts are set 20 s above it).
const hookTimeout = "90s"

// rules for the daemon: touch is allowed (and its write inside the work
// dir), mkdir denied, everything else asks.
const rules = `{
  "*": "ask",
  "Write": { "*": "ask", "./*": "allow" },
  "{Bash,bash,shell,Shell,exec_command,shell_command,local_shell,run_shell_command}": { "*": "ask", "touch *": "allow", "mkdir *": "deny", "cd *": "allow" }
}`

var (
	root      string // shared by the whole run: the binary, the npm installs
	buildOnce sync.Once
	bin       string
	buildErr  error
)

func TestMain(m *testing.M) {
	var err error
	root, err = os.MkdirTemp("", "approvalbot-agents-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(root)
	os.Exit(code)
}

// approvalbotBin builds approvalbot once per run.
func approvalbotBin(t *testing.T) string {
	buildOnce.Do(func() {
		bin = filepath.Join(root, "bin", "approvalbot")
		out, err := exec.Command("go", "build", "-o", bin, "approvalbot/cmd/approvalbot").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// npmCache is where npm keeps its cache between runs (gitignored).
func npmCache(t *testing.T) string {
	p, err := filepath.Abs(".npm-cache")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// npmInstall installs pkgs into dir (under the run's temp root) and returns
// dir. The npm cache makes a repeated install local.
func npmInstall(t *testing.T, dir string, pkgs ...string) string {
	t.Helper()
	start := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"install", "--prefix", dir, "--cache", npmCache(t), "--prefer-offline", "--no-fund", "--no-audit", "--loglevel=error"}, pkgs...)
	cmd := exec.Command("npm", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %v: %v\n%s", pkgs, err, out)
	}
	t.Logf("npm install %v: %s", pkgs, time.Since(start).Round(100*time.Millisecond))
	return dir
}

// harness is one agent's world: a daemon, the fake model, a HOME and a
// work dir.
type harness struct {
	t       *testing.T
	agent   string // approvalbot install/hook name
	bin     string
	url     string
	client  *api.Client
	fake    *FakeModel
	fakeURL string
	home    string
	work    string
	env     []string // the agent's environment
}

func newHarness(t *testing.T, agent string) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, agent: agent, bin: approvalbotBin(t), home: filepath.Join(dir, "home"), work: filepath.Join(dir, "work")}
	for _, d := range []string{h.home, h.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.url, h.client = startDaemon(t, h.bin, dir)
	h.fake = NewFakeModel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h.fake}}
	srv.Start()
	t.Cleanup(srv.Close)
	h.fakeURL = srv.URL
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("fake model log:\n%s", h.fake.Log())
		}
	})
	h.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + h.home,
		"APPROVALBOT_URL=" + h.url,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	return h
}

// decide runs `approvalbot approve|deny ID` as the person would.
func (h *harness) decide(t *testing.T, verb, id string) {
	t.Helper()
	cmd := exec.Command(h.bin, verb, id)
	cmd.Env = append(os.Environ(), "APPROVALBOT_URL="+h.url, "APPROVALBOT_DATA_DIR="+filepath.Join(filepath.Dir(h.home), "data"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("approvalbot %s: %v\n%s", verb, err, out)
	}
}

// install runs `approvalbot install AGENT` as the person would.
func (h *harness) install(extra ...string) string {
	h.t.Helper()
	cmd := exec.Command(h.bin, append([]string{"install", h.agent, "--timeout", hookTimeout}, extra...)...)
	cmd.Env = append(h.env, "APPROVALBOT_URL="+h.url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("approvalbot install %s: %v\n%s", h.agent, err, out)
	}
	return string(out)
}

func (h *harness) writeFile(rel, content string) string {
	h.t.Helper()
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(h.home, rel)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// run is one agent run in the background.
type run struct {
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan error
}

// start runs argv in the work dir with the harness's environment.
func (h *harness) start(ctx context.Context, argv []string, extraEnv ...string) *run {
	h.t.Helper()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = h.work
	cmd.Env = append(append([]string(nil), h.env...), extraEnv...)
	cmd.Stdin = nil
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("start %s: %v", argv[0], err)
	}
	r := &run{cmd: cmd, out: &out, done: make(chan error, 1)}
	go func() { r.done <- cmd.Wait() }()
	h.t.Cleanup(func() {
		// The whole group, in case a test ended with the agent still up.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	return r
}

// wait waits for the run to end.
func (r *run) wait(t *testing.T) string {
	t.Helper()
	select {
	case err := <-r.done:
		if err != nil {
			t.Logf("agent exited: %v", err)
		}
	case <-time.After(runTimeout):
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("agent did not finish in %s:\n%s", runTimeout, r.out.String())
	}
	return r.out.String()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// waitPending waits for this agent's pending approval.
func (h *harness) waitPending(r *run) *gate.Approval {
	h.t.Helper()
	a := h.pendingOrDone(r)
	if a == nil {
		h.t.Fatalf("the agent ended before asking:\n%s", r.out.String())
	}
	return a
}

// waitStatus waits until approval id has left pending.
func (h *harness) waitStatus(id string) *gate.Approval {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a bound on a loaded machine, not a speed check
	for {
		a, err := h.client.Get(context.Background(), id, 0)
		if err != nil {
			h.t.Fatalf("get %s: %v", id, err)
		}
		if a.Status != gate.StatusPending || time.Now().After(deadline) {
			return a
		}
		time.Sleep(100 * time.Millisecond) // poll interval, bounded by the deadline
	}
}

// hookPIDs lists the running `approvalbot hook AGENT` processes of this
// harness's binary.
func (h *harness) hookPIDs() []int { return e2etest.HookPIDs(h.bin, h.agent) }

// startDaemon runs `approvalbot serve` with the test rules on a free
// loopback port until the test ends.
func startDaemon(t *testing.T, bin, dir string) (url string, client *api.Client) {
	t.Helper()
	rulesPath := filepath.Join(dir, "rules.jsonc")
	if err := os.WriteFile(rulesPath, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	return e2etest.Serve(t, bin, e2etest.FreeAddr(t), filepath.Join(dir, "data"),
		"HOME="+dir,
		"APPROVALBOT_RULES="+rulesPath,
		"APPROVALBOT_TIMEOUT=80s",
	)
}

// agentCase is how one agent is installed, set up and run.
type agentCase struct {
	name string // approvalbot's name for it
	// setup installs the CLI (cached across subtests) and writes its
	// settings besides approvalbot's; it returns the argv of one
	// non-interactive run for a prompt.
	setup func(h *harness) (argv func(prompt string) []string, env []string)
}

// runAgentSuite runs the four checks for one agent, each in a fresh world.
func runAgentSuite(t *testing.T, c agentCase) {
	prompt := func(cmd string) string { return "Please do this: APPROVALBOT_E2E_RUN[[" + cmd + "]]" }

	t.Run("allowed command runs", func(t *testing.T) {
		h := newHarness(t, c.name)
		argv, env := c.setup(h)
		marker := filepath.Join(h.work, "allowed-marker")
		r := h.start(context.Background(), argv(prompt("touch "+marker)), env...)
		out := r.wait(t)
		if !exists(marker) {
			t.Fatalf("allowed command did not run; the agent said:\n%s", out)
		}
		if len(h.fake.ToolResults()) == 0 {
			t.Fatalf("the model never received a tool result:\n%s", out)
		}
	})

	t.Run("denied command does not run and the model sees why", func(t *testing.T) {
		h := newHarness(t, c.name)
		argv, env := c.setup(h)
		marker := filepath.Join(h.work, "denied-dir")
		r := h.start(context.Background(), argv(prompt("mkdir "+marker)), env...)
		out := r.wait(t)
		if exists(marker) {
			t.Fatal("denied command ran")
		}
		res := h.fake.ToolResults()
		if len(res) == 0 {
			t.Fatalf("the model never received a tool result:\n%s", out)
		}
		if last := res[len(res)-1]; !strings.Contains(last, "approvalbot: denied by rule") || !strings.Contains(last, "mkdir") {
			t.Fatalf("the model did not see approvalbot's reason; tool result: %q", last)
		}
	})

	t.Run("asked command runs only after approve", func(t *testing.T) {
		h := newHarness(t, c.name)
		argv, env := c.setup(h)
		src := h.writeFile(filepath.Join(h.work, "src"), "x")
		marker := filepath.Join(h.work, "asked-marker")
		r := h.start(context.Background(), argv(prompt("cp "+src+" "+marker)), env...)
		a := h.waitPending(r)
		if a.Agent != c.name && !strings.HasPrefix(a.Agent, c.name) {
			t.Errorf("pending approval's agent %q", a.Agent)
		}
		if !strings.Contains(string(a.Input), "asked-marker") {
			t.Fatalf("pending approval %+v", a)
		}
		if exists(marker) {
			t.Fatal("asked command ran before approval")
		}
		h.decide(t, "approve", a.ID)
		out := r.wait(t)
		if !exists(marker) {
			t.Fatalf("approved command did not run; the agent said:\n%s", out)
		}
	})

	t.Run("killed agent withdraws its approval", func(t *testing.T) {
		h := newHarness(t, c.name)
		argv, env := c.setup(h)
		src := h.writeFile(filepath.Join(h.work, "src"), "x")
		marker := filepath.Join(h.work, "killed-marker")
		r := h.start(context.Background(), argv(prompt("cp "+src+" "+marker)), env...)
		a := h.waitPending(r)
		pids := h.hookPIDs()
		if len(pids) != 1 {
			t.Fatalf("hook processes %v, want 1", pids)
		}
		parent := e2etest.PPID(pids[0])
		if parent <= 1 {
			t.Fatalf("hook %d has no parent to kill", pids[0])
		}
		// SIGKILL the process that started the hook (the agent itself, not
		// a wrapper): it cannot tell its hook anything.
		if err := syscall.Kill(parent, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		got := h.waitStatus(a.ID)
		if got.Status != gate.StatusCancelled {
			t.Fatalf("approval is %s after the agent was killed, want cancelled", got.Status)
		}
		if exists(marker) {
			t.Fatal("the command ran")
		}
	})

	// A shell tool that takes its own directory (Codex's workdir, Gemini's
	// dir_path) runs there: the gate must judge it there, or ask.
	t.Run("a call given its own directory is judged there", func(t *testing.T) {
		h := newHarness(t, c.name)
		argv, env := c.setup(h)
		agents := filepath.Join(h.work, ".claude", "agents")
		if err := os.MkdirAll(agents, 0o755); err != nil {
			t.Fatal(err)
		}
		r := h.start(context.Background(), argv("Please do this: APPROVALBOT_E2E_WORKDIR[[.claude/agents]] APPROVALBOT_E2E_RUN[[touch own-dir.md]]"), env...)
		if a := h.pendingOrDone(r); a != nil {
			t.Logf("the gate asked: %s", a.Evaluation.Reason)
			h.decide(t, "deny", a.ID)
			r.wait(t)
		}
		if exists(filepath.Join(agents, "own-dir.md")) {
			t.Fatalf("the call ran in %s, and the gate judged it elsewhere; fake model log:\n%s", agents, h.fake.Log())
		}
	})

	// An agent whose shell keeps its directory between calls must say
	// where the next call runs: `cd .claude/agents` then `touch x.md`
	// writes a subagent (which may declare hooks), which only a person
	// may allow. Either the second call runs where it started (and the
	// file lands in the work dir), or the gate judges it where it runs
	// and asks.
	t.Run("a directory kept between calls is judged", func(t *testing.T) {
		h := newHarness(t, c.name)
		argv, env := c.setup(h)
		agents := filepath.Join(h.work, ".claude", "agents")
		if err := os.MkdirAll(agents, 0o755); err != nil {
			t.Fatal(err)
		}
		r := h.start(context.Background(), argv("Please do this: APPROVALBOT_E2E_RUN[[cd .claude/agents]] and then APPROVALBOT_E2E_RUN[[touch kept-dir.md]]"), env...)
		if a := h.pendingOrDone(r); a != nil {
			t.Logf("the agent keeps its directory, and the gate asked: %s", a.Evaluation.Reason)
			if !strings.Contains(a.Evaluation.Reason, filepath.Join(agents, "kept-dir.md")) {
				t.Errorf("asked about %q, want the write into %s", a.Evaluation.Reason, agents)
			}
			h.decide(t, "deny", a.ID)
			r.wait(t)
		}
		if exists(filepath.Join(agents, "kept-dir.md")) {
			t.Fatalf("the second call ran in %s, and the gate judged it elsewhere; fake model log:\n%s", agents, h.fake.Log())
		}
		if exists(filepath.Join(h.work, "kept-dir.md")) {
			t.Log("the second call ran in the work dir: the agent does not keep its directory")
		} else if len(h.fake.ToolResults()) < 2 {
			t.Fatalf("the agent did not make both calls:\n%s", h.fake.Log())
		}
	})
}

// pendingOrDone waits until this agent asks (the pending approval) or the
// run ends (nil).
func (h *harness) pendingOrDone(r *run) *gate.Approval {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	for {
		list, err := h.client.List(ctx, gate.StatusPending)
		if err != nil {
			h.t.Fatalf("list pending: %v", err)
		}
		if len(list) > 0 {
			return list[0]
		}
		select {
		case err := <-r.done:
			if err != nil {
				h.t.Logf("agent exited: %v", err)
			}
			return nil
		case <-ctx.Done():
			h.t.Fatalf("neither an approval nor the end of the run:\n%s", r.out.String())
		case <-time.After(100 * time.Millisecond): // poll interval, bounded by ctx
		}
	}
}

//go:build e2e

package e2ewatch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/config"
	"approvalbot/e2e/e2etest"
	"approvalbot/gate"
)

// Limits of the test: every wait polls until its deadline.
const (
	pollEvery    = 50 * time.Millisecond
	waitDeadline = 30 * time.Second
	paneWidth    = 120
	paneHeight   = 50
)

// TestWatchUnderTmux runs the real daemon and the real terminal frontend:
// two calls ask, the first is approved and the second denied with a typed
// reason, by keys sent to the tmux pane; the clients waiting on the API
// must receive exactly those decisions.
func TestWatchUnderTmux(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux is needed (apt-get install -y tmux): %v", err)
	}
	dir := t.TempDir()
	bin := e2etest.BuildBinary(t, dir)
	url := startServe(t, bin, dir)
	// watch finds the approver token in the daemon's data dir, as on the
	// person's own machine.
	tm := startTmux(t, tmux, dir, fmt.Sprintf("env APPROVALBOT_URL=%s APPROVALBOT_DATA_DIR=%s APPROVALBOT_TOKEN= NO_COLOR=1 %s watch --by e2e-tester --guard 300ms",
		url, filepath.Join(dir, "data"), bin))

	tm.waitPane("connected · 0 pending")

	client := api.NewClient(url, "") // the agent's side: no token on an open loopback daemon
	tok, err := config.ReadApproverToken(filepath.Join(dir, "data"), true)
	if err != nil {
		t.Fatal(err)
	}
	person := api.NewClient(url, tok)
	type result struct {
		a   *gate.Approval
		err error
	}
	submit := func(session, cmd string) <-chan result {
		ch := make(chan result, 1)
		input, _ := json.Marshal(map[string]string{"command": cmd})
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*waitDeadline)
			defer cancel()
			a, err := client.SubmitAndWait(ctx, gate.Call{Agent: "e2e-agent", SessionID: session, Tool: "Bash", Input: input, Cwd: dir}, 10*time.Second)
			ch <- result{a, err}
		}()
		return ch
	}

	// A key typed before any box exists must not answer the box that
	// comes next.
	tm.keys("1")
	first := submit("s1", "touch e2e-first-file")
	tm.waitPane("touch e2e-first-file")
	second := submit("s2", "rm -rf e2e-second-dir")
	// The oldest is shown first, with the other one waiting; keys count
	// only once the box says it takes them.
	tm.waitPane("touch e2e-first-file", "1 more waiting", "↑/↓ Enter")
	pending, err := person.List(context.Background(), gate.StatusPending)
	if err != nil || len(pending) != 2 {
		t.Fatalf("pending before any decision: %d, %v; want both (a stale key decided?)", len(pending), err)
	}
	tm.keys("1")

	r := wait(t, first)
	if r.err != nil || r.a.Status != gate.StatusApproved || r.a.Decision != gate.Allow || r.a.DecidedBy != "local-approver (e2e-tester)" {
		t.Fatalf("first call: %+v, %v; want approved by e2e-tester", r.a, r.err)
	}
	tm.waitPane("rm -rf e2e-second-dir", "Approved by local-approver (e2e-tester)", "↑/↓ Enter")
	tm.keys("-l", "too risky")
	tm.waitPane("reason: too risky")
	tm.keys("Enter")

	r = wait(t, second)
	if r.err != nil || r.a.Status != gate.StatusDenied || r.a.Decision != gate.Deny || r.a.Reason != "too risky" || r.a.DecidedBy != "local-approver (e2e-tester)" {
		t.Fatalf("second call: %+v, %v; want denied by e2e-tester with the reason", r.a, r.err)
	}
	tm.waitPane("No pending approvals", "Denied by local-approver (e2e-tester)", "too risky")

	// Two calls of one session are one grouped view, both listed in full;
	// 4 approves exactly those two.
	third := submit("s3", "echo e2e-batch-one")
	tm.waitPane("echo e2e-batch-one")
	fourth := submit("s3", "echo e2e-batch-two")
	tm.waitPane("e2e-agent: 2 calls waiting", "echo e2e-batch-one", "echo e2e-batch-two", "4 Approve all 2", "↑/↓ Enter")
	tm.keys("4")
	for _, ch := range []<-chan result{third, fourth} {
		r = wait(t, ch)
		if r.err != nil || r.a.Status != gate.StatusApproved || r.a.DecidedBy != "local-approver (e2e-tester)" {
			t.Fatalf("batch call: %+v, %v; want approved by e2e-tester", r.a, r.err)
		}
	}

	// The session's next call comes after the press: a box of its own,
	// still pending; Always for this agent for 1 hour saves a rule that
	// expires.
	fifth := submit("s3", "git log --oneline")
	tm.waitPane("git log --oneline", "Approval 1 of 1", "↑/↓ Enter")
	tm.keys("2")
	tm.waitPane("(•) this session", "( ) this agent, 1 hour")
	tm.keys("Right")
	tm.waitPane("(•) this agent, 1 hour")
	tm.keys("Enter")
	r = wait(t, fifth)
	if r.err != nil || r.a.Status != gate.StatusApprovedAlways {
		t.Fatalf("fifth call: %+v, %v; want approved always", r.a, r.err)
	}
	// The gate saves the rule just after the decision reaches the agent.
	poll(t, "an Always rule for the agent expiring in an hour", func() (bool, string) {
		rules, err := person.Rules(context.Background(), "e2e-agent")
		ok := err == nil && len(rules) == 1 && rules[0].Scope == gate.ScopeAgent && rules[0].ExpiresAt != nil &&
			time.Until(*rules[0].ExpiresAt) <= time.Hour && time.Until(*rules[0].ExpiresAt) > 50*time.Minute
		return ok, fmt.Sprintf("%+v, %v", rules, err)
	})

	// Ctrl+C leaves watch cleanly, printing what happened.
	tm.keys("C-c")
	// The exit status comes from the file the pane's shell writes: tmux
	// 3.3a sometimes marks a pane dead without recording its status.
	poll(t, "watch to exit with status 0", func() (bool, string) {
		b, _ := os.ReadFile(tm.status)
		st := strings.TrimSpace(string(b))
		return st == "0", st
	})
}

func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitDeadline):
		t.Fatal("a waiting client got no answer")
		var zero T
		return zero
	}
}

// startServe runs `approvalbot serve` on a loopback port with a temporary
// data dir and a rules file that asks about every call.
func startServe(t *testing.T, bin, dir string) string {
	t.Helper()
	rules := filepath.Join(dir, "rules.jsonc")
	if err := os.WriteFile(rules, []byte(`{"*": "ask"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := e2etest.FreeAddr(t)
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		"APPROVALBOT_DATA_DIR="+filepath.Join(dir, "data"),
		"APPROVALBOT_LISTEN="+addr,
		"APPROVALBOT_RULES="+rules,
		"APPROVALBOT_TIMEOUT=5m",
		"APPROVALBOT_LOG_LEVEL=debug",
		"APPROVALBOT_TELEGRAM_TOKEN=", "APPROVALBOT_SLACK_BOT_TOKEN=", "APPROVALBOT_API_TOKENS=", "APPROVALBOT_ADMIN_TOKENS=",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("serve log:\n%s", b)
		}
		logf.Close()
	})
	url := "http://" + addr
	poll(t, "the daemon to answer /healthz", func() (bool, string) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("serve exited: %v", err)
		default:
		}
		resp, err := http.Get(url + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return url
}

type tmuxPane struct {
	t      *testing.T
	tmux   string
	socket string
	status string // file the pane's shell writes the exit status to
}

// startTmux runs command in a detached tmux session of a fixed size, on a
// private server socket so it never touches the user's tmux.
func startTmux(t *testing.T, tmux, dir, command string) *tmuxPane {
	t.Helper()
	p := &tmuxPane{t: t, tmux: tmux, socket: filepath.Join(dir, "tmux.sock"), status: filepath.Join(dir, "exit-status")}
	// A shell runs the command and records its exit status.
	script := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(script, []byte(command+"\necho $? > "+p.status+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	p.run("-f", "/dev/null", "new-session", "-d", "-s", "e2e", "-x", fmt.Sprint(paneWidth), "-y", fmt.Sprint(paneHeight), "sh "+script)
	// Keep the pane after watch exits, to see how it ended.
	p.run("set-option", "-t", "e2e", "remain-on-exit", "on")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pane at the end:\n%s", p.capture())
		}
		_ = exec.Command(p.tmux, "-S", p.socket, "kill-server").Run()
	})
	return p
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-S", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (p *tmuxPane) capture() string {
	out, err := exec.Command(p.tmux, "-S", p.socket, "capture-pane", "-p", "-t", "e2e").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v: %s)", err, out)
	}
	return string(out)
}

// keys sends keys to the pane (tmux send-keys syntax).
func (p *tmuxPane) keys(keys ...string) {
	p.t.Helper()
	p.run(append([]string{"send-keys", "-t", "e2e"}, keys...)...)
}

// waitPane waits until the pane shows every one of want.
func (p *tmuxPane) waitPane(want ...string) {
	p.t.Helper()
	poll(p.t, fmt.Sprintf("the pane to show %q", want), func() (bool, string) {
		s := p.capture()
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false, s
			}
		}
		return true, s
	})
}

// poll checks cond until it holds or the deadline passes.
func poll(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(waitDeadline)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last seen:\n%s", what, last)
		}
		<-tick.C
	}
}

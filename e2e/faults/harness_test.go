//go:build e2e

package e2efaults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/config"
)

var binPath string

func TestMain(m *testing.M) {
	code := func() int {
		if p := os.Getenv("APPROVALBOT_BIN"); p != "" {
			binPath = p
			return m.Run()
		}
		dir, err := os.MkdirTemp("", "approvalbot-faults-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		binPath = filepath.Join(dir, "approvalbot")
		if out, err := exec.Command("go", "build", "-o", binPath, "approvalbot/cmd/approvalbot").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// daemon runs `approvalbot serve` on one address and data dir, and can be
// killed and started again on them.
type daemon struct {
	t       testing.TB
	addr    string
	dataDir string
	env     []string
	logs    *lockedBuffer

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func newDaemon(t testing.TB, extraEnv ...string) *daemon {
	t.Helper()
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.jsonc")
	if err := os.WriteFile(rules, []byte(`{ "*": "ask", "Bash": { "*": "ask", "echo ok *": "allow" } }`), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	d := &daemon{t: t, addr: addr, dataDir: filepath.Join(dir, "data"), logs: &lockedBuffer{}}
	d.env = append(os.Environ(), "HOME="+dir, "APPROVALBOT_DATA_DIR="+d.dataDir, "APPROVALBOT_LISTEN="+addr,
		"APPROVALBOT_RULES="+rules, "APPROVALBOT_TIMEOUT=10m", "APPROVALBOT_LOG_LEVEL=info")
	d.env = append(d.env, extraEnv...)
	t.Cleanup(func() {
		d.stop(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("daemon log:\n%s", tail(d.logs.String(), 6000))
		}
	})
	return d
}

func (d *daemon) url() string { return "http://" + d.addr }

// start starts serve and waits until it answers /healthz.
func (d *daemon) start() {
	d.t.Helper()
	cmd := exec.Command(binPath, "serve")
	cmd.Env = d.env
	cmd.Stdout, cmd.Stderr = d.logs, d.logs
	if err := cmd.Start(); err != nil {
		d.t.Fatalf("start serve: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	d.mu.Lock()
	d.cmd, d.done = cmd, done
	d.mu.Unlock()
	c := api.NewClient(d.url(), "")
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Health(ctx)
		cancel()
		if err == nil {
			return
		}
		select {
		case <-done:
			d.t.Fatalf("serve exited at start:\n%s", tail(d.logs.String(), 3000))
		default:
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("serve not healthy in 30s: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop sends sig and waits for the process to end (SIGKILL after 10s).
func (d *daemon) stop(sig syscall.Signal) {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.cmd = nil
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// approver is the person's client, with the approver token serve made.
func (d *daemon) approver() *api.Client {
	d.t.Helper()
	tok, err := config.ReadApproverToken(d.dataDir, true)
	if err != nil {
		d.t.Fatalf("approver token: %v", err)
	}
	return api.NewClient(d.url(), tok)
}

// hookResult is what one `approvalbot hook claude` process answered.
type hookResult struct {
	key      string
	decision string // permissionDecision
	reason   string
	stdout   string
	stderr   string
	err      error
}

// runHook runs a real `approvalbot hook claude` for a Bash call with
// tool_use_id key and returns its answer. It is killed at ctx's end.
func runHook(ctx context.Context, d *daemon, key, command string, args ...string) hookResult {
	payload, _ := json.Marshal(map[string]any{
		"session_id": "s-" + key, "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]string{"command": command}, "tool_use_id": key, "cwd": "/tmp",
	})
	cmd := exec.CommandContext(ctx, binPath, append([]string{"hook", "claude"}, args...)...)
	cmd.Env = append(os.Environ(), "APPROVALBOT_URL="+d.url(), "APPROVALBOT_TOKEN=")
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := hookResult{key: key, stdout: out.String(), stderr: errb.String(), err: err}
	var body struct {
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal(out.Bytes(), &body) == nil {
		r.decision = body.HookSpecificOutput.PermissionDecision
		r.reason = body.HookSpecificOutput.PermissionDecisionReason
	}
	return r
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// unreachable reports whether a hook's answer blamed an unreachable daemon.
func (r hookResult) unreachable() bool {
	return strings.Contains(r.reason, "unreachable") || strings.Contains(r.stderr, "unreachable")
}

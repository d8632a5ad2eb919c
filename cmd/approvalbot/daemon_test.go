package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/config"
)

// The tests in this file run the real binary as a separate process.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// TestMain removes the binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// binary builds approvalbot once per test run and returns its path.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "approvalbot-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "approvalbot")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// freeAddr returns a loopback address nothing listens on right now.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// daemon is a running `approvalbot serve` process.
type daemon struct {
	cmd  *exec.Cmd
	logs *bytes.Buffer
	url  string
	done chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func startDaemon(t testing.TB, addr string, extraEnv ...string) *daemon {
	t.Helper()
	return startDaemonEnv(t, addr, append(os.Environ(), extraEnv...))
}

// startDaemonEnv starts `approvalbot serve` on addr with exactly env (plus
// the listen address).
func startDaemonEnv(t testing.TB, addr string, env []string) *daemon {
	t.Helper()
	cmd := exec.Command(binary(t), "serve")
	cmd.Env = append(append([]string{}, env...), "APPROVALBOT_LISTEN="+addr, "APPROVALBOT_LOG_LEVEL=debug")
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	d := &daemon{cmd: cmd, logs: &logs.Buffer, url: "http://" + addr, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()
	t.Cleanup(func() { d.kill() })
	c := api.NewClient(d.url, "")
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Health(ctx)
		cancel()
		if err == nil {
			return d
		}
		select {
		case err := <-d.done:
			logs.mu.Lock()
			t.Fatalf("serve exited: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not healthy in time: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (d *daemon) kill() {
	if d.cmd.ProcessState == nil {
		d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
		d.done <- nil // let a second kill return
	}
}

// approverClient is the person's client for a daemon whose data dir is
// dataDir: it presents the approver token serve made there.
func approverClient(t testing.TB, url, dataDir string) *api.Client {
	t.Helper()
	tok, err := config.ReadApproverToken(dataDir, true)
	if err != nil {
		t.Fatalf("approver token: %v", err)
	}
	return api.NewClient(url, tok)
}

// askRules makes every Bash command ask.
func askRules(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rules.jsonc")
	if err := os.WriteFile(p, []byte(`{ "*": "ask", "Bash": { "*": "ask", "echo ok": "allow" } }`), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

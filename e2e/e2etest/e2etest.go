// Package e2etest holds what the end-to-end suites share: building the
// approvalbot binary, picking a loopback port and running `approvalbot
// serve` until a test ends.
package e2etest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/config"
)

// BuildBinary builds cmd/approvalbot into dir and returns its path.
func BuildBinary(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "approvalbot")
	cmd := exec.Command("go", "build", "-o", bin, "approvalbot/cmd/approvalbot")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// FreeAddr returns a loopback host:port nothing listens on right now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Serve runs `bin serve` on addr with dataDir as its data dir and env
// added to the environment, until the test ends; it returns once /healthz
// answers, with a client holding the approver token serve made, so the
// test decides as the person on this machine.
func Serve(t testing.TB, bin, addr, dataDir string, env ...string) (url string, client *api.Client) {
	t.Helper()
	url = "http://" + addr
	ctx, cancel := context.WithCancel(context.Background())
	serve := exec.CommandContext(ctx, bin, "serve")
	serve.Env = append(os.Environ(), "APPROVALBOT_DATA_DIR="+dataDir, "APPROVALBOT_LISTEN="+addr)
	serve.Env = append(serve.Env, env...)
	var serveLog bytes.Buffer
	serve.Stdout, serve.Stderr = &serveLog, &serveLog
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = serve.Wait()
		if t.Failed() {
			t.Logf("approvalbot serve log:\n%s", serveLog.String())
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		hctx, hcancel := context.WithTimeout(context.Background(), time.Second)
		_, err := api.NewClient(url, "").Health(hctx)
		hcancel()
		if err == nil {
			tok, err := config.ReadApproverToken(dataDir, true)
			if err != nil {
				t.Fatal(err)
			}
			return url, api.NewClient(url, tok)
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not come up: %v\n%s", err, serveLog.String())
		}
		time.Sleep(50 * time.Millisecond) // polling for readiness, bounded by the deadline
	}
}

// HookPIDs returns the processes running `BIN hook AGENT`.
func HookPIDs(bin, agent string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) >= 3 && args[0] == bin && args[1] == "hook" && args[2] == agent {
			pids = append(pids, pid)
		}
	}
	return pids
}

// PPID reads a process's parent id (0 when it is gone).
func PPID(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

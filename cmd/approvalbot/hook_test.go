package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeDaemon answers POST /v1/calls from the command in the call: "echo"
// is allowed, "rm" denied, anything else stays pending until the client goes
// away. It records agents and cancellations.
type fakeDaemon struct {
	mu        sync.Mutex
	agents    []string
	cancelled []string
	polling   chan string // receives the id of each long-poll that started
}

func (f *fakeDaemon) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/calls":
		var c struct {
			Agent string `json:"agent"`
			Input struct {
				Command string `json:"command"`
			} `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&c)
		f.mu.Lock()
		f.agents = append(f.agents, c.Agent)
		f.mu.Unlock()
		switch {
		case strings.HasPrefix(c.Input.Command, "echo"):
			io.WriteString(w, `{"id":"a1","status":"allowed","decision":"allow","reason":"echo allowed","agent":"x","tool":"Bash"}`)
		case strings.HasPrefix(c.Input.Command, "rm"):
			io.WriteString(w, `{"id":"a2","status":"denied","decision":"deny","reason":"no rm here","via":"rules","agent":"x","tool":"Bash"}`)
		default:
			io.WriteString(w, `{"id":"a3","status":"pending","agent":"x","tool":"Bash"}`)
		}
	case r.Method == http.MethodGet && r.URL.Path == "/v1/approvals/a3":
		if f.polling != nil {
			f.polling <- "a3"
		}
		<-r.Context().Done()
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/cancel"):
		f.mu.Lock()
		f.cancelled = append(f.cancelled, r.URL.Path)
		f.mu.Unlock()
		io.WriteString(w, `{"id":"a3","status":"cancelled","decision":"deny","agent":"x","tool":"Bash"}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"not found","code":"not_found"}`)
	}
}

func hookPayload(command string) string {
	return `{"session_id":"s1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + command + `"},"tool_use_id":"toolu_1"}`
}

func TestHookCommandInProcess(t *testing.T) {
	fd := &fakeDaemon{}
	srv := httptest.NewServer(fd)
	defer srv.Close()
	down := "http://" + freeAddr(t)
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		stdin    string
		code     int
		decision string // Claude permissionDecision; "" for no JSON check
		reason   string // in the reason (Claude) or on stderr (Codex, exit 2)
	}{
		{"claude allowed", []string{"hook", "claude"}, map[string]string{"APPROVALBOT_URL": srv.URL}, hookPayload("echo hi"), 0, "allow", "echo allowed"},
		{"claude denied", []string{"hook", "claude"}, map[string]string{"APPROVALBOT_URL": srv.URL}, hookPayload("rm -rf /"), 0, "deny", "no rm here"},
		{"claude no daemon", []string{"hook", "claude", "--connect-grace", "100ms"}, map[string]string{"APPROVALBOT_URL": down}, hookPayload("echo hi"), 0, "deny", "daemon unreachable"},
		{"claude no daemon, on-error ask", []string{"hook", "claude", "--connect-grace", "100ms", "--on-error", "ask"}, map[string]string{"APPROVALBOT_URL": down}, hookPayload("echo hi"), 0, "ask", "daemon unreachable"},
		{"claude garbage stdin", []string{"hook", "claude"}, map[string]string{"APPROVALBOT_URL": srv.URL}, "rm -rf /", 0, "deny", "not a JSON object"},
		{"claude own deadline", []string{"hook", "claude", "--timeout", "200ms"}, map[string]string{"APPROVALBOT_URL": srv.URL}, hookPayload("make"), 0, "deny", "no decision in time"},
		{"codex denied exits 2", []string{"hook", "codex"}, map[string]string{"APPROVALBOT_URL": srv.URL}, hookPayload("rm x"), 2, "", "no rm here"},
		{"codex allowed", []string{"hook", "codex"}, map[string]string{"APPROVALBOT_URL": srv.URL}, hookPayload("echo x"), 0, "", ""},
		{"codex has no on-error ask", []string{"hook", "codex", "--on-error", "ask"}, nil, hookPayload("echo x"), exitUsage, "", "on-error"},
		{"bad on-error", []string{"hook", "claude", "--on-error", "allow"}, nil, hookPayload("echo x"), exitUsage, "", "--on-error must be deny or ask"},
		{"unknown agent", []string{"hook", "windsurf"}, nil, "", exitUsage, "", "unknown agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			e := &env{stdin: strings.NewReader(tt.stdin), stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return tt.env[k] }}
			code := dispatch(context.Background(), e, tt.args)
			if code != tt.code {
				t.Fatalf("exit %d, want %d (stdout %q, stderr %q)", code, tt.code, stdout.String(), stderr.String())
			}
			if tt.decision != "" {
				var out struct {
					HookSpecificOutput struct {
						PermissionDecision       string `json:"permissionDecision"`
						PermissionDecisionReason string `json:"permissionDecisionReason"`
					} `json:"hookSpecificOutput"`
				}
				if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
					t.Fatalf("stdout %q: %v", stdout.String(), err)
				}
				if out.HookSpecificOutput.PermissionDecision != tt.decision || !strings.Contains(out.HookSpecificOutput.PermissionDecisionReason, tt.reason) {
					t.Fatalf("got %s, want %s with %q", stdout.String(), tt.decision, tt.reason)
				}
			} else if tt.reason != "" && !strings.Contains(stderr.String(), tt.reason) {
				t.Fatalf("stderr %q lacks %q", stderr.String(), tt.reason)
			}
		})
	}
}

func TestHookAgentName(t *testing.T) {
	fd := &fakeDaemon{}
	srv := httptest.NewServer(fd)
	defer srv.Close()
	run := func(args []string, vars map[string]string) {
		vars["APPROVALBOT_URL"] = srv.URL
		e := &env{stdin: strings.NewReader(hookPayload("echo")), stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
		if code := dispatch(context.Background(), e, args); code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
	}
	run([]string{"hook", "claude"}, map[string]string{})
	run([]string{"hook", "claude"}, map[string]string{"APPROVALBOT_AGENT": "from-env"})
	run([]string{"hook", "claude", "--agent", "from-flag"}, map[string]string{"APPROVALBOT_AGENT": "from-env"})
	run([]string{"hook", "codex"}, map[string]string{})
	fd.mu.Lock()
	defer fd.mu.Unlock()
	if got := strings.Join(fd.agents, ","); got != "claude-code,from-env,from-flag,codex" {
		t.Fatalf("agents %s", got)
	}
}

// The real binary with no daemon listening: a deny JSON on stdout and exit
// 0, which is what Claude Code reads as a decision (exit 2 would be a
// blocking error; other codes are failures that let the call through
// unless the hook has onFailure "block").
func TestHookProcessFailsClosedWithoutDaemon(t *testing.T) {
	cmd := exec.Command(binary(t), "hook", "claude", "--connect-grace", "200ms")
	cmd.Env = []string{"APPROVALBOT_URL=http://" + freeAddr(t)}
	cmd.Stdin = strings.NewReader(hookPayload("echo hi"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("exit: %v (stderr %s)", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"permissionDecision":"deny"`) || !strings.Contains(stdout.String(), "daemon unreachable") {
		t.Fatalf("stdout %s", stdout.String())
	}
}

// Claude Code cancels a hook with SIGTERM: the process withdraws the pending
// approval through the API and exits with a deny.
func TestHookProcessSIGTERMCancelsApproval(t *testing.T) {
	fd := &fakeDaemon{polling: make(chan string, 4)}
	srv := httptest.NewServer(fd)
	defer srv.Close()
	cmd := exec.Command(binary(t), "hook", "claude")
	cmd.Env = []string{"APPROVALBOT_URL=" + srv.URL}
	cmd.Stdin = strings.NewReader(hookPayload("make deploy"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fd.polling:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("hook never long-polled its approval")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v (stderr %s)", err, stderr.String())
	}
	fd.mu.Lock()
	cancelled := append([]string(nil), fd.cancelled...)
	fd.mu.Unlock()
	if len(cancelled) != 1 || cancelled[0] != "/v1/approvals/a3/cancel" {
		t.Fatalf("cancelled %v", cancelled)
	}
	if !strings.Contains(stdout.String(), `"permissionDecision":"deny"`) {
		t.Fatalf("stdout %s", stdout.String())
	}
}

func TestMCPCommandInProcess(t *testing.T) {
	srv := httptest.NewServer(&fakeDaemon{})
	defer srv.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	e := &env{stdin: inR, stdout: outW, stderr: &stderr, getenv: func(k string) string {
		return map[string]string{"APPROVALBOT_URL": srv.URL}[k]
	}}
	done := make(chan int, 1)
	go func() {
		done <- dispatch(context.Background(), e, []string{"mcp"})
		outW.Close()
	}()
	// Claude keeps stdin open while calls are in flight; closing it ends the server.
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"approve","arguments":{"tool_name":"Bash","input":{"command":"echo hi"},"tool_use_id":"t1"}}}
`)
	sc := bufio.NewScanner(outR)
	var lines []string
	for len(lines) < 2 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if len(lines) != 2 || !strings.Contains(lines[0], `"protocolVersion":"2025-06-18"`) ||
		!strings.Contains(lines[1], `{\"behavior\":\"allow\",\"updatedInput\":{\"command\":\"echo hi\"}}`) {
		t.Fatalf("stdout:\n%s", strings.Join(lines, "\n"))
	}
}

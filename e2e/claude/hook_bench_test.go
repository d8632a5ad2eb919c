//go:build e2e

package claudee2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// hookVariant is one hook process measured by BenchmarkHookLatency: its
// argv after the binary, a payload for call n, and what an allow looks like
// on its stdout.
type hookVariant struct {
	name    string
	args    []string
	payload func(n int) string
	allow   string
}

// benchCommand is allowed by the e2e rules (a plain touch in /tmp).
func benchCommand(n int) string { return fmt.Sprintf("touch /tmp/approvalbot-bench-%d", n%64) }

var hookVariants = []hookVariant{
	{"claude", []string{"hook", "claude"}, func(n int) string {
		return fmt.Sprintf(`{"session_id":"bench","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":"toolu_c%d"}`, benchCommand(n), n)
	}, `"permissionDecision":"allow"`},
	{"codex", []string{"hook", "codex"}, func(n int) string {
		return fmt.Sprintf(`{"session_id":"bench","cwd":"/tmp","hook_event_name":"PreToolUse","model":"gpt-5-codex","tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":"call_x%d"}`, benchCommand(n), n)
	}, `{}`}, // Codex: an empty object lets the call run
	{"gemini", []string{"hook", "gemini"}, func(n int) string {
		return fmt.Sprintf(`{"session_id":"bench-%d","cwd":"/tmp","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":%q}}`, n, benchCommand(n))
	}, `"decision":"allow"`},
	{"copilot", []string{"hook", "copilot"}, func(n int) string {
		return fmt.Sprintf(`{"sessionId":"bench-%d","timestamp":1795439852911,"cwd":"/tmp","toolName":"bash","toolArgs":{"command":%q}}`, n, benchCommand(n))
	}, `"allow"`},
	{"cursor", []string{"hook", "cursor"}, func(n int) string {
		return fmt.Sprintf(`{"conversation_id":"bench-%d","generation_id":"g-%d","hook_event_name":"beforeShellExecution","workspace_roots":["/tmp"],"command":%q,"cwd":"/tmp"}`, n, n, benchCommand(n))
	}, `"permission":"allow"`},
	{"opencode", []string{"hook", "opencode"}, func(n int) string {
		return fmt.Sprintf(`{"sessionID":"bench","callID":"call_o%d","tool":"bash","args":{"command":%q},"directory":"/tmp"}`, n, benchCommand(n))
	}, `"allow"`},
}

// BenchmarkHookLatency runs each agent's `approvalbot hook KIND` as a new
// process per call, for a call the rules allow, against a running `serve`
// on loopback, interleaved round by round with the floor: a minimal Go hook
// (testdata/minhook: stdin → one POST → stdout) against the same daemon.
// Reports each variant's median in ms and its ratio to the floor's median
// from the same rounds, so machine noise hits both alike.
//
//	go test -tags e2e -run '^$' -bench HookLatency -benchtime 200x ./e2e/claude/
func BenchmarkHookLatency(b *testing.B) {
	root := b.TempDir()
	// Every agent's shell tool name, allowed for touch.
	bin, url, _ := startDaemonRules(b, root, `{"*":"ask","Write":{"*":"ask","./*":"allow"},"{Bash,bash,shell,Shell,run_shell_command}":{"*":"ask","touch *":"allow"}}`)
	floor := filepath.Join(root, "minhook")
	if out, err := exec.Command("go", "build", "-o", floor, "./testdata/minhook").CombinedOutput(); err != nil {
		b.Fatalf("build minhook: %v\n%s", err, out)
	}
	env := append(os.Environ(), "APPROVALBOT_URL="+url)
	run := func(path string, args []string, payload, want string) time.Duration {
		cmd := exec.Command(path, args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(payload)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %v: %v", path, args, err)
		}
		d := time.Since(start)
		if !strings.Contains(out.String(), want) {
			b.Fatalf("%s %v: not an allow: %s", path, args, out.String())
		}
		return d
	}
	floorRun := func(n int) time.Duration {
		return run(floor, nil, hookVariants[0].payload(n+1_000_000), `"permissionDecision":"allow"`)
	}
	for n := range 5 { // warm the page cache and the daemon
		floorRun(n)
		for _, v := range hookVariants {
			run(bin, v.args, v.payload(n+2_000_000), v.allow)
		}
	}
	times := make(map[string][]time.Duration)
	n := 0
	b.ResetTimer()
	for b.Loop() {
		times["floor"] = append(times["floor"], floorRun(n))
		for _, v := range hookVariants {
			times[v.name] = append(times[v.name], run(bin, v.args, v.payload(n), v.allow))
		}
		n++
	}
	b.StopTimer()
	med := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	f := med(times["floor"])
	b.ReportMetric(f, "floor-ms")
	for _, v := range hookVariants {
		m := med(times[v.name])
		b.ReportMetric(m, v.name+"-ms")
		b.ReportMetric(m/f, v.name+"/floor")
	}
}

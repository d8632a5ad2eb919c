//go:build e2e

package claudee2e

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkHookProcessAllowed runs `approvalbot hook claude` as a new
// process per iteration, for a call the rules allow, against a running
// `approvalbot serve` on loopback: process start to the decision on stdout
// (the process exits right after writing it). Reports the median.
func BenchmarkHookProcessAllowed(b *testing.B) {
	bin, url, _ := startDaemon(b, b.TempDir())
	payload := []byte(`{"session_id":"bench","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"touch /tmp/approvalbot-bench"},"tool_use_id":"toolu_bench"}`)
	env := append(os.Environ(), "APPROVALBOT_URL="+url)
	run := func() time.Duration {
		cmd := exec.Command(bin, "hook", "claude")
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(payload)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		if !strings.Contains(out.String(), `"permissionDecision":"allow"`) {
			b.Fatalf("not an allow: %s", out.String())
		}
		return d
	}
	for range 5 { // warm the page cache and the daemon
		run()
	}
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		ds = append(ds, run())
	}
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(ds[len(ds)*9/10].Microseconds())/1000, "p90-ms")
}

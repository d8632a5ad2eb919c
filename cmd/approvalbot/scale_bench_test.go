package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/gate"
)

// rssKB reads a process's resident set size from /proc.
func rssKB(b *testing.B, pid int) float64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			return kb
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkPendingMemory reports the daemon's RSS with 1,000 approvals
// pending at once (issue 4 target: under 150 MB).
//
//	go test -run x -bench PendingMemory -benchtime 1x ./cmd/approvalbot
func BenchmarkPendingMemory(b *testing.B) {
	for range b.N {
		addr := freeAddr(b)
		d := startDaemon(b, addr, "APPROVALBOT_DATA_DIR="+b.TempDir(), "APPROVALBOT_RULES="+askRules(b), "APPROVALBOT_LOG_LEVEL=warn")
		c := api.NewClient(d.url, "")
		ctx := context.Background()
		var wg sync.WaitGroup
		sem := make(chan struct{}, 32)
		for i := range 1000 {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				input, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("make target-%d && ./deploy.sh --env staging --verbose", i)})
				if _, err := c.Submit(ctx, gate.Call{Agent: "claude", SessionID: "s", Tool: "Bash", Input: input, Cwd: "/srv/app"}, 0); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		if h, err := c.Health(ctx); err != nil || h.Pending != 1000 {
			b.Fatalf("pending = %+v, %v", h, err)
		}
		b.ReportMetric(rssKB(b, d.cmd.Process.Pid)/1024, "MB-RSS")
		d.kill()
	}
}

// BenchmarkStartup10k reports the time from starting `serve` on a store
// with 10,000 pending approvals to its first healthy answer (issue 4
// target: under 3 s).
//
//	go test -run x -bench Startup10k -benchtime 3x ./cmd/approvalbot
func BenchmarkStartup10k(b *testing.B) {
	// Realistic approvals (about 2 KB each, with the whole evaluation).
	dir := seedDir(b, 10000)
	ctx := context.Background()
	binary(b) // built before the clock starts
	b.ResetTimer()
	for range b.N {
		addr := freeAddr(b)
		start := time.Now()
		d := startDaemon(b, addr, "APPROVALBOT_DATA_DIR="+dir, "APPROVALBOT_LOG_LEVEL=warn")
		b.ReportMetric(time.Since(start).Seconds(), "s-to-healthy")
		h, err := api.NewClient(d.url, "").Health(ctx)
		if err != nil || h.Pending != 10000 {
			b.Fatalf("pending after start = %+v, %v", h, err)
		}
		d.kill()
	}
}

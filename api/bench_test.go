package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"approvalbot/gate"
)

// benchSubmitAllowed measures calls the rules allow at once, through a real
// HTTP server on loopback and the Go client with keep-alive, from parallel
// clients (as concurrent agent hooks would be).
func benchSubmitAllowed(b *testing.B, svc Service, cfg Config, token string) {
	srv := NewServer(cfg, svc, nil)
	ts := httptest.NewServer(srv) // a real listener on 127.0.0.1
	b.Cleanup(ts.Close)
	c := NewClient(ts.URL, token)
	call := gate.Call{Agent: "bench", SessionID: "s1", Tool: "OkTool", Cwd: "/src",
		Input: json.RawMessage(`{"file_path":"/src/main.go"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a, err := c.Submit(ctx, call, 0)
			if err != nil {
				b.Error(err)
				return
			}
			if a.Status != gate.StatusAllowed {
				b.Errorf("status %s", a.Status)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
	// On a shared machine wall-clock throughput depends on the neighbours;
	// calls per CPU-second of this process (server and client together) does not.
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "calls/cpu-s")
	}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkSubmitAllowed(b *testing.B) {
	b.Run("fake", func(b *testing.B) {
		e := newEnv(b, Config{})
		benchSubmitAllowed(b, e.fake, tokenConfig(), tokAlice)
	})
	b.Run("gate", func(b *testing.B) {
		g, closeGate := realGate(b, b.TempDir())
		b.Cleanup(closeGate)
		benchSubmitAllowed(b, g, tokenConfig(), tokAlice)
	})
}

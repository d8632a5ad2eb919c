package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

// benchSubmitAllowed measures calls the rules allow at once, through a real
// HTTP server on loopback and the Go client with keep-alive, from parallel
// clients (as concurrent agent hooks would be).
func benchSubmitAllowed(b *testing.B, svc Service, cfg Config, token string) {
	ts := httptest.NewServer(NewServer(cfg, svc, nil)) // a real listener on 127.0.0.1
	b.Cleanup(ts.Close)
	cpu0 := cpuTime()
	perCall := submitLoop(b, NewClient(ts.URL, token), gate.StatusAllowed)
	b.ReportMetric(float64(time.Second)/perCall, "calls/s")
	if floorNsPerOp > 0 {
		b.ReportMetric(perCall/floorNsPerOp, "x-floor")
	}
	// On a shared machine wall-clock throughput depends on the neighbours;
	// calls per CPU-second of this process (server and client together) does not.
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "calls/cpu-s")
	}
}

// submitLoop submits the benchmark's call b.N times from 4 goroutines per
// CPU and returns the wall-clock nanoseconds per call. want "" accepts any
// status.
func submitLoop(b *testing.B, c *Client, want gate.Status) float64 {
	call := gate.Call{Agent: "bench", SessionID: "s1", Tool: "OkTool", Cwd: "/src",
		Input: json.RawMessage(`{"file_path":"/src/main.go"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a, err := c.Submit(ctx, call, 0)
			if err != nil {
				b.Error(err)
				return
			}
			if want != "" && a.Status != want {
				b.Errorf("status %s", a.Status)
				return
			}
		}
	})
	return float64(time.Since(start).Nanoseconds()) / float64(b.N)
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// floorNsPerOp is the last "floor" run's time per call, so the runs after
// it report their cost as a multiple of it (x-floor): a ratio to a minimal
// handler on the same machine in the same run, which drifts far less with
// the machine's load than ns/op does.
var floorNsPerOp float64

// benchFloor is the least any call through HTTP on loopback costs: a
// handler that reads the same body and answers a small JSON object, from
// the same client with keep-alive and the same parallelism.
func benchFloor(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","status":"allowed","decision":"allow","agent":"bench","tool":"OkTool"}`)
	}))
	b.Cleanup(ts.Close)
	floorNsPerOp = submitLoop(b, NewClient(ts.URL, tokAlice), "")
}

// BenchmarkSubmitAllowed: an allowed call through the real API handler on
// loopback, against the real gate on the in-memory store (memstore) and on
// bbolt (gate), each also as a multiple of the floor (x-floor). Compare
// x-floor across changes:
//
//	go test -run '^$' -bench SubmitAllowed -count 6 ./api
func BenchmarkSubmitAllowed(b *testing.B) {
	b.Run("floor", benchFloor)
	b.Run("memstore", func(b *testing.B) {
		env := gatetest.New(b, gatetest.Options{Rules: envRules})
		benchSubmitAllowed(b, env.G, tokenConfig(), tokAlice)
	})
	b.Run("gate", func(b *testing.B) {
		g, closeGate := realGate(b, b.TempDir())
		b.Cleanup(closeGate)
		benchSubmitAllowed(b, g, tokenConfig(), tokAlice)
	})
}

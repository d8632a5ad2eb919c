package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"approvalbot/api"
	"approvalbot/config"
	"approvalbot/gate"
	"approvalbot/store"
)

// The benchmarks in this file measure the pending-approval costs of a real
// serve against floors run beside them in the same benchmark (the machine
// is noisy: read the ratios):
//
//	go test -run x -bench PendingCosts -benchtime 3x ./cmd/approvalbot
//
// The store is seeded in /dev/shm when there is one (fsync is free there;
// what is measured only reads).

// BenchmarkPendingCosts seeds stores of 10,000 and 50,000 pending
// approvals once and runs each measure on them.
func BenchmarkPendingCosts(b *testing.B) {
	dirs := map[int]string{}
	for _, n := range []int{10000, 50000} {
		dirs[n] = seedDir(b, n)
	}
	for _, n := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("restart/%d", n), func(b *testing.B) { benchRestart(b, dirs[n], n) })
	}
	b.Run("lists-rss/50000", func(b *testing.B) { benchListRSS(b, dirs[50000], 50000) })
	b.Run("subscribe-stall/50000", func(b *testing.B) { benchSubscribeStall(b, dirs[50000], 50000) })
}

// seedDir returns a new data dir holding n pending approvals of about 2 KB
// of JSON each (the whole evaluation, as real ones carry).
func seedDir(b *testing.B, n int) string {
	b.Helper()
	base := "/dev/shm"
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		base = ""
	}
	dir, err := os.MkdirTemp(base, "approvalbot-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	st, err := store.Open(filepath.Join(dir, "approvalbot.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				a := realisticApproval(i, now)
				if _, err := st.CreateApproval(ctx, a); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st.Close()
	return dir
}

// realisticApproval is a pending Bash approval with a full evaluation,
// about 2 KB as JSON.
func realisticApproval(i int, now time.Time) *gate.Approval {
	cmd := fmt.Sprintf("cd /srv/app && make target-%d && ./scripts/deploy.sh --env staging --verbose --tag v1.%d | tee /tmp/deploy-%d.log", i, i, i)
	input, _ := json.Marshal(map[string]string{"command": cmd, "description": "Build and deploy the staging target to check the change end to end"})
	var verdicts []gate.Verdict
	for _, part := range []string{"cd /srv/app", fmt.Sprintf("make target-%d", i), "./scripts/deploy.sh --env staging --verbose", fmt.Sprintf("tee /tmp/deploy-%d.log", i)} {
		verdicts = append(verdicts, gate.Verdict{Kind: "command", Subject: part, Decision: gate.Ask,
			Reason: "no rule matched this command; a person decides",
			Rule:   &gate.RuleRef{File: "/home/dev/.config/approvalbot/rules.jsonc", Line: 40 + i%50, Tool: "Bash", Pattern: "*"}})
	}
	return &gate.Approval{ID: fmt.Sprintf("seed%012d", i), Status: gate.StatusPending, Agent: "claude",
		SessionID: "0f8e6c2a-5b1d-4d8e-9a57-3c1f2e4b6a7d", Tool: "Bash", Input: input, Cwd: "/srv/app",
		IdempotencyKey: fmt.Sprintf("toolu_01%022d", i), Digest: fmt.Sprintf("%064x", i),
		Evaluation: gate.Evaluation{Decision: gate.Ask, Reason: "asked: make, ./scripts/deploy.sh, tee need a person",
			Kind: gate.KindShell, Commands: verdicts, Always: []string{fmt.Sprintf("make target-%d", i), "./scripts/deploy.sh *"}},
		CreatedAt: now, Deadline: now.Add(24 * time.Hour)}
}

// TestHelperBoltScan is the restart floor when run by the benchmarks as a
// process (BOLTSCAN=path): open the bbolt file and walk every key of every
// bucket. It does nothing in a normal test run.
func TestHelperBoltScan(t *testing.T) {
	path := os.Getenv("BOLTSCAN")
	if path == "" {
		return
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keys := 0
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, bk *bolt.Bucket) error {
			return bk.ForEach(func(k, v []byte) error { keys++; return nil })
		})
	})
	if err != nil || keys == 0 {
		t.Fatalf("scan: %d keys, %v", keys, err)
	}
}

// boltScan runs the floor process on dir's store and returns its time.
func boltScan(b *testing.B, dir string) time.Duration {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBoltScan$")
	cmd.Env = append(os.Environ(), "BOLTSCAN="+filepath.Join(dir, "approvalbot.db"))
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("floor: %v\n%s", err, out)
	}
	return time.Since(start)
}

// healthyAfter starts serve on dir and returns the time to its first
// /healthz answer, with the daemon (killed with SIGKILL by the caller).
func healthyAfter(b *testing.B, dir string, pending int) (time.Duration, *exec.Cmd, string) {
	b.Helper()
	addr := freeAddr(b)
	cmd := exec.Command(binary(b), "serve")
	cmd.Env = append(os.Environ(), "APPROVALBOT_DATA_DIR="+dir, "APPROVALBOT_LISTEN="+addr, "APPROVALBOT_LOG_LEVEL=warn")
	hc := &http.Client{Timeout: time.Second}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	for {
		resp, err := hc.Get("http://" + addr + "/healthz")
		if err == nil {
			var h gate.Health
			json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			took := time.Since(start)
			if h.Pending != pending {
				b.Fatalf("pending after start = %d, want %d", h.Pending, pending)
			}
			return took, cmd, "http://" + addr
		}
		if time.Since(start) > time.Minute {
			cmd.Process.Kill()
			b.Fatalf("serve not healthy in a minute: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
}

func sigkill(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

func median(ds []float64) float64 {
	s := append([]float64(nil), ds...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// benchRestart: SIGKILL, exec serve, first /healthz answer, alternated
// with the floor (a process that opens the same file and walks every key).
// Reports the median of each and of the per-pair ratios (issue 15 target:
// at most 5x).
func benchRestart(b *testing.B, dir string, n int) {
	boltScan(b, dir) // warm the page cache for both
	var ours, floor, ratio []float64
	for range b.N {
		f := boltScan(b, dir)
		o, cmd, _ := healthyAfter(b, dir, n)
		sigkill(cmd)
		ours, floor = append(ours, o.Seconds()), append(floor, f.Seconds())
		ratio = append(ratio, o.Seconds()/f.Seconds())
	}
	b.ReportMetric(median(ours), "s-serve")
	b.ReportMetric(median(floor), "s-floor")
	b.ReportMetric(median(ratio), "x-floor")
}

// vmHWM reads a process's peak resident set size (KiB).
func vmHWM(b *testing.B, pid int) float64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(strings.Fields(rest)[0], &kb)
			return kb
		}
	}
	b.Fatal("no VmHWM")
	return 0
}

// benchListRSS: 16 clients list every pending approval at once
// (each following next_cursor to the end) on a serve with 50,000 pending;
// reports the daemon's peak RSS (issue 15 target: under 300 MB) and the
// time for all 16.
func benchListRSS(b *testing.B, dir string, n int) {
	for range b.N {
		_, cmd, url := healthyAfter(b, dir, n)
		tok, err := config.ReadApproverToken(dir, false)
		if err != nil {
			tok, _, err = config.EnsureApproverToken(dir)
			if err != nil {
				b.Fatal(err)
			}
		}
		before := vmHWM(b, cmd.Process.Pid)
		start := time.Now()
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := api.NewClient(url, tok).List(context.Background(), gate.StatusPending)
				if err != nil || len(got) != n {
					b.Errorf("list: %d, %v", len(got), err)
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(time.Since(start).Seconds(), "s-16-lists")
		b.ReportMetric(before/1024, "MiB-peak-before")
		b.ReportMetric(vmHWM(b, cmd.Process.Pid)/1024, "MiB-peak-lists")
		sigkill(cmd)
	}
}

// benchSubscribeStall: with 50,000 pending, the worst latency of an
// allowed call (POST /v1/calls, `echo ok`, sequential) while 10 /v1/events
// subscribers connect, against the worst latency of the same calls with
// no subscriber (issue 15 target: no stall over 10 ms).
func benchSubscribeStall(b *testing.B, dir string, n int) {
	var withSubs, alone []float64
	for range b.N {
		_, cmd, url := healthyAfter(b, dir, n)
		tok, _, err := config.EnsureApproverToken(dir)
		if err != nil {
			b.Fatal(err)
		}
		worst := func(calls int, during func()) time.Duration {
			var w time.Duration
			done := make(chan struct{})
			go func() { during(); close(done) }()
			c := api.NewClient(url, "")
			for i := 0; i < calls; i++ {
				s := time.Now()
				a, err := c.Submit(context.Background(), bashCall("claude", "echo ok"), 0)
				if err != nil || a.Status != gate.StatusAllowed {
					b.Fatalf("allowed call: %+v, %v", a, err)
				}
				w = max(w, time.Since(s))
			}
			<-done
			return w
		}
		floor := worst(200, func() {})
		ours := worst(200, func() {
			var wg sync.WaitGroup
			for range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, _ := http.NewRequest("GET", url+"/v1/events", nil)
					req.Header.Set("Authorization", "Bearer "+tok)
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					resp, err := http.DefaultClient.Do(req.WithContext(ctx))
					if err != nil {
						b.Error(err)
						return
					}
					defer resp.Body.Close()
					// Read the replay's first event, then leave.
					buf := make([]byte, 4096)
					io.ReadAtLeast(resp.Body, buf, 64)
				}()
			}
			wg.Wait()
		})
		withSubs = append(withSubs, float64(ours.Microseconds())/1000)
		alone = append(alone, float64(floor.Microseconds())/1000)
		sigkill(cmd)
	}
	// Each run's worst call; the median run, since one run's worst is noise.
	b.ReportMetric(median(withSubs), "ms-worst-with-subs")
	b.ReportMetric(median(alone), "ms-worst-alone")
}

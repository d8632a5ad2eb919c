package api

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"approvalbot/gate"
)

// Metrics holds approvalbot's metrics and serves them in the Prometheus
// text exposition format (version 0.0.4). It is written here rather than
// with client_golang because every `approvalbot hook` process links this
// package: client_golang and its protobuf dependencies cost each hook
// about 2 ms of start-up, more than half of its overhead over a minimal
// Go hook. The API server counts HTTP requests and calls answered at once;
// Consume counts what happens to approvals whatever surface decided them;
// frontends report their send failures with SendError and SendRetry. It is
// safe for concurrent use.
type Metrics struct {
	start time.Time

	mu          sync.Mutex
	calls       counterVec // status, decision
	decision    histogramVec
	requests    counterVec // route, code
	sendErrors  counterVec // frontend
	sendRetries counterVec // frontend
	pendingID   map[string]struct{}
	pendingLive func() int // the gate's own count, once Consume has a live source
}

// decisionBuckets run from a quick tap on a phone to the default 10m
// timeout and beyond.
var decisionBuckets = []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 3600}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		start:       time.Now(),
		calls:       counterVec{},
		decision:    histogramVec{},
		requests:    counterVec{},
		sendErrors:  counterVec{},
		sendRetries: counterVec{},
		pendingID:   map[string]struct{}{},
	}
}

// counterVec maps a label set, rendered as `{a="x",b="y"}`, to its count.
type counterVec map[string]float64

// histogramVec maps a label set to its histogram.
type histogramVec map[string]*histogram

type histogram struct {
	counts []uint64 // per bucket of decisionBuckets, not cumulative
	sum    float64
	n      uint64
}

// labels renders name=value pairs (names in sorted order, as Prometheus
// clients write them) with values escaped.
func labels(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(escapeLabel(kv[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.write(w)
	})
}

func (m *Metrics) write(w io.Writer) {
	m.mu.Lock()
	pending := float64(len(m.pendingID))
	live := m.pendingLive
	calls, requests := clone(m.calls), clone(m.requests)
	sendErrors, sendRetries := clone(m.sendErrors), clone(m.sendRetries)
	hist := make(map[string]histogram, len(m.decision))
	for k, h := range m.decision {
		hist[k] = histogram{counts: slices.Clone(h.counts), sum: h.sum, n: h.n}
	}
	m.mu.Unlock()
	if live != nil {
		pending = float64(live())
	}

	writeFamily(w, "approvalbot_calls_total", "counter",
		"Tool calls by final status and decision: allowed/denied at once by the rules (counted by the API), or approvals resolved by a person, a mode, a rule, a timeout or a cancel.", calls)
	writeFamily(w, "approvalbot_approvals_pending", "gauge", "Approvals waiting for a person.", counterVec{"": pending})
	writeHistograms(w, "approvalbot_time_to_decision_seconds", "Time from an approval's creation to its final status.", hist)
	writeFamily(w, "approvalbot_http_requests_total", "counter", "HTTP API requests by route pattern and status code.", requests)
	writeFamily(w, "approvalbot_frontend_send_errors_total", "counter", "Failed sends to a chat frontend (each attempt).", sendErrors)
	writeFamily(w, "approvalbot_frontend_send_retries_total", "counter", "Sends to a chat frontend retried after a failure or a rate limit.", sendRetries)
	m.writeProcess(w)
}

func clone(c counterVec) counterVec {
	out := make(counterVec, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func writeFamily(w io.Writer, name, typ, help string, series counterVec) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	for _, k := range sortedKeys(series) {
		fmt.Fprintf(w, "%s%s %s\n", name, k, formatValue(series[k]))
	}
}

func writeHistograms(w io.Writer, name, help string, hs map[string]histogram) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	for _, k := range sortedKeys(hs) {
		h := hs[k]
		inner := strings.TrimSuffix(strings.TrimPrefix(k, "{"), "}")
		if inner != "" {
			inner += ","
		}
		var cum uint64
		for i, ub := range decisionBuckets {
			cum += h.counts[i]
			fmt.Fprintf(w, "%s_bucket{%sle=%q} %d\n", name, inner, formatValue(ub), cum)
		}
		fmt.Fprintf(w, "%s_bucket{%sle=\"+Inf\"} %d\n", name, inner, h.n)
		fmt.Fprintf(w, "%s_sum%s %s\n%s_count%s %d\n", name, k, formatValue(h.sum), name, k, h.n)
	}
}

func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// writeProcess writes the usual go_ and process_ series that dashboards
// expect (a subset of client_golang's Go and process collectors).
func (m *Metrics) writeProcess(w io.Writer) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gauge := func(name, help string, v float64) {
		writeFamily(w, name, "gauge", help, counterVec{"": v})
	}
	gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	gauge("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and still in use.", float64(ms.HeapAlloc))
	gauge("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", float64(ms.HeapInuse))
	gauge("go_memstats_sys_bytes", "Number of bytes obtained from system.", float64(ms.Sys))
	writeFamily(w, "go_gc_cycles_total", "counter", "Number of completed GC cycles.", counterVec{"": float64(ms.NumGC)})
	gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", float64(m.start.Unix()))
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		writeFamily(w, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", counterVec{"": cpu.Seconds()})
	}
	if rss, ok := residentBytes(); ok {
		gauge("process_resident_memory_bytes", "Resident memory size in bytes.", rss)
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		gauge("process_open_fds", "Number of open file descriptors.", float64(len(fds)))
	}
}

// residentBytes reads the resident set size from /proc (Linux only).
func residentBytes() (float64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseFloat(f[1], 64)
	if err != nil {
		return 0, false
	}
	return pages * float64(os.Getpagesize()), true
}

// SendError counts a failed send to frontend ("telegram", "slack").
func (m *Metrics) SendError(frontend string) { m.add(m.sendErrors, labels("frontend", frontend)) }

// SendRetry counts a retried send to frontend.
func (m *Metrics) SendRetry(frontend string) { m.add(m.sendRetries, labels("frontend", frontend)) }

func (m *Metrics) add(c counterVec, key string) {
	m.mu.Lock()
	c[key]++
	m.mu.Unlock()
}

// liveSource is an EventSource that can skip the replay and count what is
// pending itself (the gate): the metrics then never decode the pending
// approvals, at start or on a resubscribe.
type liveSource interface {
	SubscribeLive(ctx context.Context) <-chan gate.Event
	PendingCount() int
}

// Consume feeds the approval metrics from src's events until ctx ends. Run it
// in its own goroutine. If the subscription is dropped (a slow consumer, a
// closing gate), it subscribes again. With a src that counts its pending
// approvals (the gate), the pending gauge reads that count and only live
// events are consumed; otherwise each subscription's replay of pending
// approvals resets the gauge to the truth.
func (m *Metrics) Consume(ctx context.Context, src EventSource) {
	const retry = time.Second
	live, isLive := src.(liveSource)
	if isLive {
		m.mu.Lock()
		m.pendingLive = live.PendingCount
		m.mu.Unlock()
	}
	for ctx.Err() == nil {
		m.mu.Lock()
		clear(m.pendingID)
		m.mu.Unlock()
		ch := (<-chan gate.Event)(nil)
		if isLive {
			ch = live.SubscribeLive(ctx)
		} else {
			ch = src.Subscribe(ctx)
		}
		for ev := range ch {
			m.observe(ev)
		}
		t := time.NewTimer(retry)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

func (m *Metrics) observe(ev gate.Event) {
	a := ev.Approval
	if a == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch ev.Type {
	case gate.EventApprovalRequired:
		m.pendingID[a.ID] = struct{}{}
	case gate.EventApprovalResolved:
		delete(m.pendingID, a.ID)
		// Calls answered at once are counted by the API where they are answered.
		if a.Status != gate.StatusAllowed && a.Status != gate.StatusDenied {
			m.calls[labels("decision", string(a.Decision), "status", string(a.Status))]++
			if a.DecidedAt != nil && !a.CreatedAt.IsZero() {
				m.observeDecision(labels("status", string(a.Status)), a.DecidedAt.Sub(a.CreatedAt).Seconds())
			}
		}
	}
}

// observeDecision adds one time to decision; m.mu is held.
func (m *Metrics) observeDecision(key string, secs float64) {
	h := m.decision[key]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(decisionBuckets))}
		m.decision[key] = h
	}
	if i, _ := slices.BinarySearch(decisionBuckets, secs); i < len(decisionBuckets) {
		h.counts[i]++
	}
	h.sum += secs
	h.n++
}

// callAnswered counts a call the rules answered at once.
func (m *Metrics) callAnswered(a *gate.Approval) {
	if a.Status == gate.StatusAllowed || a.Status == gate.StatusDenied {
		m.add(m.calls, labels("decision", string(a.Decision), "status", string(a.Status)))
	}
}

func (m *Metrics) httpRequest(route string, code int) {
	if route == "" {
		route = "unmatched"
	}
	m.add(m.requests, labels("code", strconv.Itoa(code), "route", route))
}

package api

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"approvalbot/gate"
)

// Metrics holds approvalbot's Prometheus metrics on a registry of its own
// (never the global default one). The API server counts HTTP requests and
// calls answered at once; Consume counts what happens to approvals whatever
// surface decided them; frontends report their send failures with
// SendError and SendRetry. It is safe for concurrent use.
type Metrics struct {
	reg         *prometheus.Registry
	calls       *prometheus.CounterVec
	pending     prometheus.Gauge
	decision    *prometheus.HistogramVec
	requests    *prometheus.CounterVec
	sendErrors  *prometheus.CounterVec
	sendRetries *prometheus.CounterVec

	mu        sync.Mutex
	pendingID map[string]struct{}
	liveOnce  sync.Once
}

// NewMetrics returns metrics on a new registry, with the Go runtime and
// process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "approvalbot_calls_total",
			Help: "Tool calls by final status and decision: allowed/denied at once by the rules (counted by the API), or approvals resolved by a person, a mode, a rule, a timeout or a cancel.",
		}, []string{"status", "decision"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "approvalbot_approvals_pending",
			Help: "Approvals waiting for a person.",
		}),
		decision: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "approvalbot_time_to_decision_seconds",
			Help: "Time from an approval's creation to its final status.",
			// From a quick tap on a phone to the default 10m timeout and beyond.
			Buckets: []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 3600},
		}, []string{"status"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "approvalbot_http_requests_total",
			Help: "HTTP API requests by route pattern and status code.",
		}, []string{"route", "code"}),
		sendErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "approvalbot_frontend_send_errors_total",
			Help: "Failed sends to a chat frontend (each attempt).",
		}, []string{"frontend"}),
		sendRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "approvalbot_frontend_send_retries_total",
			Help: "Sends to a chat frontend retried after a failure or a rate limit.",
		}, []string{"frontend"}),
		pendingID: map[string]struct{}{},
	}
	m.reg.MustRegister(m.calls, m.pending, m.decision, m.requests, m.sendErrors, m.sendRetries,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registerer lets other parts add their own collectors to the same registry.
func (m *Metrics) Registerer() prometheus.Registerer { return m.reg }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// SendError counts a failed send to frontend ("telegram", "slack").
func (m *Metrics) SendError(frontend string) { m.sendErrors.WithLabelValues(frontend).Inc() }

// SendRetry counts a retried send to frontend.
func (m *Metrics) SendRetry(frontend string) { m.sendRetries.WithLabelValues(frontend).Inc() }

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
		m.liveOnce.Do(func() {
			m.reg.Unregister(m.pending)
			m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "approvalbot_approvals_pending",
				Help: "Approvals waiting for a person.",
			}, func() float64 { return float64(live.PendingCount()) }))
		})
	}
	for ctx.Err() == nil {
		m.mu.Lock()
		clear(m.pendingID)
		m.pending.Set(0)
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
			m.calls.WithLabelValues(string(a.Status), string(a.Decision)).Inc()
			if a.DecidedAt != nil && !a.CreatedAt.IsZero() {
				m.decision.WithLabelValues(string(a.Status)).Observe(a.DecidedAt.Sub(a.CreatedAt).Seconds())
			}
		}
	}
	m.pending.Set(float64(len(m.pendingID)))
}

// callAnswered counts a call the rules answered at once.
func (m *Metrics) callAnswered(a *gate.Approval) {
	if a.Status == gate.StatusAllowed || a.Status == gate.StatusDenied {
		m.calls.WithLabelValues(string(a.Status), string(a.Decision)).Inc()
	}
}

func (m *Metrics) httpRequest(route string, code int) {
	if route == "" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
}

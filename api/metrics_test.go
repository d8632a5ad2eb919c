package api

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"approvalbot/gate"
)

// sampleLine is one sample of the text exposition format.
var sampleLine = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [-+0-9.eE]+$|^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? \+Inf$`)

// TestMetricsExposition: every line is a comment or a well-formed sample,
// each family has HELP and TYPE once, label values are escaped, histogram
// buckets are cumulative and end at the count.
func TestMetricsExposition(t *testing.T) {
	m := NewMetrics()
	created := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for _, secs := range []float64{0.5, 1, 3, 7200} {
		at := created.Add(time.Duration(secs * float64(time.Second)))
		m.observe(gate.Event{Type: gate.EventApprovalResolved, Approval: &gate.Approval{ID: "a", Status: gate.StatusApproved,
			Decision: gate.Allow, CreatedAt: created, DecidedAt: &at}})
	}
	m.observe(gate.Event{Type: gate.EventApprovalRequired, Approval: &gate.Approval{ID: "p"}})
	m.httpRequest(`GET /v1/x"y\z`+"\n", 200)
	m.SendRetry("slack")
	var b strings.Builder
	m.write(&b)
	out := b.String()
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "# ") {
			f := strings.Fields(line)
			seen[f[1]+" "+f[2]]++
			continue
		}
		if !sampleLine.MatchString(line) {
			t.Errorf("not a sample line: %q", line)
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s written %d times", k, n)
		}
	}
	for _, want := range []string{
		`approvalbot_calls_total{decision="allow",status="approved"} 4`,
		`approvalbot_approvals_pending 1`,
		`approvalbot_time_to_decision_seconds_bucket{status="approved",le="1"} 2`,
		`approvalbot_time_to_decision_seconds_bucket{status="approved",le="5"} 3`,
		`approvalbot_time_to_decision_seconds_bucket{status="approved",le="3600"} 3`,
		`approvalbot_time_to_decision_seconds_bucket{status="approved",le="+Inf"} 4`,
		`approvalbot_time_to_decision_seconds_count{status="approved"} 4`,
		`approvalbot_time_to_decision_seconds_sum{status="approved"} 7204.5`,
		`approvalbot_http_requests_total{code="200",route="GET /v1/x\"y\\z\n"} 1`,
		`approvalbot_frontend_send_retries_total{frontend="slack"} 1`,
		"# TYPE approvalbot_time_to_decision_seconds histogram",
		"\ngo_goroutines ",
		"\nprocess_resident_memory_bytes ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestValidVia(t *testing.T) {
	for via, want := range map[string]bool{
		"telegram": true, "web": true, "my_bot-2": true, "a": true,
		"": false, "Telegram": false, "2fa": false, "-x": false, "a b": false, "é": false,
		strings.Repeat("a", 32): true, strings.Repeat("a", 33): false, "ok\n": false,
	} {
		if got := validVia(via); got != want {
			t.Errorf("validVia(%q) = %v, want %v", via, got, want)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/bots/slacktest"
	"approvalbot/gate"
)

// TestServeSlackAndMetrics runs the real daemon with the Slack frontend
// against the fake Slack: a call that asks is posted to the channel (after a
// 429 that is retried), and /metrics counts the retry and the pending call.
func TestServeSlackAndMetrics(t *testing.T) {
	sl := slacktest.New(t)
	sl.RateLimit("chat.postMessage", 1) // the first post gets a 429, Retry-After 1s
	addr := freeAddr(t)
	d := startDaemon(t, addr,
		"APPROVALBOT_DATA_DIR="+t.TempDir()+"/data", "APPROVALBOT_RULES="+askRules(t),
		"APPROVALBOT_SLACK_BOT_TOKEN=xoxb-test", "APPROVALBOT_SLACK_APP_TOKEN=xapp-test",
		"APPROVALBOT_SLACK_CHANNEL=C123", "APPROVALBOT_SLACK_APPROVERS=U1",
		"APPROVALBOT_SLACK_API_URL="+sl.APIURL())
	c := api.NewClient(d.url, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	input, _ := json.Marshal(map[string]string{"command": "terraform apply"})
	a, err := c.Submit(ctx, gate.Call{Agent: "claude", Tool: "Bash", Input: input, Cwd: "/srv"}, 0)
	if err != nil || a.Status != gate.StatusPending {
		t.Fatalf("submit = %+v, %v", a, err)
	}
	if err := sl.Await(ctx, func(s slacktest.Snapshot) bool { return len(s.Messages) == 1 }); err != nil {
		t.Fatalf("no Slack message: %v", err)
	}
	if msg := sl.Snapshot().Messages[0]; !strings.Contains(msg.Text+fmtBlocks(msg), "terraform apply") {
		t.Errorf("message does not show the command: %+v", msg)
	}
	metrics := func() string {
		resp, err := http.Get(d.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := metrics()
		if strings.Contains(m, `approvalbot_frontend_send_retries_total{frontend="slack"} 1`) &&
			strings.Contains(m, "approvalbot_approvals_pending 1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics lack the slack retry or the pending gauge:\n%s", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fmtBlocks flattens a message's blocks for a text search.
func fmtBlocks(m slacktest.Message) string {
	b, _ := json.Marshal(m)
	return string(b)
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/config"
	"approvalbot/gate"
)

func bashCall(agent, command string) gate.Call {
	input, _ := json.Marshal(map[string]string{"command": command})
	return gate.Call{Agent: agent, SessionID: "s", Tool: "Bash", Input: input, Cwd: "/srv/app"}
}

// rawRequest writes req on a new connection to addr and returns the
// connection and the first answer's status line ("" with the error when
// none comes).
func rawRequest(t *testing.T, addr, req string) (net.Conn, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, req); err != nil {
		return c, err.Error()
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second)) // a bound on a hang
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return c, err.Error()
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return c, resp.Status
}

// closedByServer reports whether the server closes c (without an answer)
// before the read bound.
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestServeLimits runs a real serve with small limits and checks each:
// pending approvals per agent (429), pages of the list, the idle timeout,
// the body read deadline and the connection cap (503).
func TestServeLimits(t *testing.T) {
	addr := freeAddr(t)
	dir := t.TempDir()
	d := startDaemon(t, addr, "APPROVALBOT_DATA_DIR="+dir, "APPROVALBOT_RULES="+askRules(t),
		"APPROVALBOT_MAX_PENDING=3", "APPROVALBOT_MAX_CONNS=16", "APPROVALBOT_IDLE_TIMEOUT=1s", "APPROVALBOT_BODY_TIMEOUT=1s")
	ctx := context.Background()
	c := api.NewClient(d.url, "")
	for i := range 3 {
		if a, err := c.Submit(ctx, bashCall("greedy", fmt.Sprintf("make a%d", i)), 0); err != nil || a.Status != gate.StatusPending {
			t.Fatalf("call %d: %+v, %v", i, a, err)
		}
	}
	_, err := c.Submit(ctx, bashCall("greedy", "make a3"), 0)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests || !errors.Is(err, gate.ErrTooMany) {
		t.Fatalf("4th pending call of one agent: %v, want 429 too_many", err)
	}
	if _, err := c.Submit(ctx, bashCall("other", "make b"), 0); err != nil {
		t.Fatalf("another agent is held back: %v", err)
	}

	admin := approverClient(t, d.url, dir)
	all, err := admin.List(ctx, gate.StatusPending)
	if err != nil || len(all) != 4 {
		t.Fatalf("list: %d, %v; want 4", len(all), err)
	}
	var page struct {
		Approvals  []json.RawMessage `json:"approvals"`
		NextCursor string            `json:"next_cursor"`
	}
	req, _ := http.NewRequest("GET", d.url+"/v1/approvals?status=pending&limit=3", nil)
	tok, err := config.ReadApproverToken(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if len(page.Approvals) != 3 || page.NextCursor == "" {
		t.Errorf("a page of 3: %d approvals, next %q", len(page.Approvals), page.NextCursor)
	}

	// Idle keep-alive connections are closed.
	conn, status := rawRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	if status != "200 OK" || !closedByServer(conn) {
		t.Errorf("idle keep-alive connection: %s, not closed by the server", status)
	}
	// A body that stops coming is cut off.
	_, status = rawRequest(t, addr, "POST /v1/calls HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"tool\":")
	if strings.HasPrefix(status, "200") || strings.Contains(status, "timeout") {
		t.Errorf("stalled body: %s, want it cut off", status)
	}
	// Beyond the cap, a connection gets 503; below it, agents get through.
	var held []net.Conn
	for range 16 {
		hc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer hc.Close()
		held = append(held, hc)
	}
	// The server counts a connection once it has accepted it, which on a
	// loaded machine may come after this dial: try a few times.
	for try := 0; ; try++ {
		_, status = rawRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
		if strings.HasPrefix(status, "503") || try == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasPrefix(status, "503") {
		t.Errorf("connection over the cap: %s, want 503", status)
	}
	for _, hc := range held {
		hc.Close()
	}
	gateDeadline := time.Now().Add(20 * time.Second)
	for {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := api.NewClient(d.url, "").Health(hctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(gateDeadline) {
			t.Fatalf("no connection accepted after the held ones closed: %v", err)
		}
	}
}

// TestServeRetention: a real serve prunes decided approvals older than
// APPROVALBOT_RETENTION (at start, then hourly); the audit log keeps their
// entries and still verifies.
func TestServeRetention(t *testing.T) {
	addr := freeAddr(t)
	dir := t.TempDir()
	env := []string{"APPROVALBOT_DATA_DIR=" + dir, "APPROVALBOT_RULES=" + askRules(t),
		"APPROVALBOT_TIMEOUT=1s", "APPROVALBOT_RETENTION=2s"}
	d := startDaemon(t, addr, env...)
	ctx := context.Background()
	c := api.NewClient(d.url, "")
	a, err := c.Submit(ctx, bashCall("claude", "make old"), 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err = c.Get(ctx, a.ID, 20*time.Second)
	if err != nil || a.Status != gate.StatusExpired || a.DecidedAt == nil {
		t.Fatalf("the approval did not expire: %+v, %v", a, err)
	}
	d.kill()
	for time.Now().Before(a.DecidedAt.Add(2 * time.Second)) {
		time.Sleep(50 * time.Millisecond) // until it is past retention
	}
	d = startDaemon(t, addr, env...)
	c = api.NewClient(d.url, "")
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := c.Get(ctx, a.ID, 0)
		if errors.Is(err, gate.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the decided approval was not pruned: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	admin := approverClient(t, d.url, dir)
	n, err := admin.VerifyAudit(ctx)
	if err != nil || n < 2 {
		t.Fatalf("audit after pruning: %d entries, %v", n, err)
	}
	es, err := admin.Audit(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, e := range es {
		if e.ApprovalID == a.ID {
			kept++
		}
	}
	if kept < 2 {
		t.Errorf("the pruned approval's audit entries: %d, want its pending and expired ones", kept)
	}
}

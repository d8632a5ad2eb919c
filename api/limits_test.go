package api

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"approvalbot/gate"
)

// TestListPages: the list comes in pages with next_cursor, an agent token's
// pages hold only its approvals, and the client follows the cursors.
func TestListPages(t *testing.T) {
	e := newEnv(t, tokenConfig())
	for i := range 7 {
		e.pending(t, "alice", fmt.Sprintf("a%d", i))
		e.pending(t, "bob", fmt.Sprintf("b%d", i))
	}
	r := e.call(t, "GET", "/v1/approvals?limit=3", tokAdmin, "")
	if n := len(r.body["approvals"].([]any)); r.status != 200 || n != 3 || r.body["next_cursor"] == nil {
		t.Fatalf("first page: %d %s", r.status, r.raw)
	}
	r = e.call(t, "GET", "/v1/approvals?limit=3&cursor="+r.body["next_cursor"].(string), tokAdmin, "")
	if n := len(r.body["approvals"].([]any)); r.status != 200 || n != 3 {
		t.Fatalf("second page: %d %s", r.status, r.raw)
	}
	for _, bad := range []string{"limit=0", "limit=x", "cursor=zz", "cursor=c!"} {
		if r := e.call(t, "GET", "/v1/approvals?"+bad, tokAdmin, ""); r.status != 400 {
			t.Errorf("%s: %d %s, want 400", bad, r.status, r.raw)
		}
	}
	// Alice's pages: hers only, whatever agent she names.
	seen := 0
	cursor := ""
	for range 10 {
		r := e.call(t, "GET", "/v1/approvals?agent=bob&limit=2"+cursor, tokAlice, "")
		for _, a := range r.body["approvals"].([]any) {
			if ag := a.(map[string]any)["agent"]; ag != "alice" {
				t.Fatalf("alice sees an approval of %v", ag)
			}
			seen++
		}
		c, _ := r.body["next_cursor"].(string)
		if c == "" {
			break
		}
		cursor = "&cursor=" + c
	}
	if seen != 7 {
		t.Errorf("alice paged through %d approvals, want 7", seen)
	}
	all, err := e.client(tokAdmin).List(context.Background(), gate.StatusPending)
	if err != nil || len(all) != 14 {
		t.Errorf("client List: %d approvals, %v; want 14", len(all), err)
	}
}

// TestTooManyIs429: the gate's ErrTooMany is a 429 the client maps back.
func TestTooManyIs429(t *testing.T) {
	status, code, _, internal := statusOf(fmt.Errorf("submit: %w", gate.ErrTooMany))
	if status != http.StatusTooManyRequests || code != codeTooMany || internal {
		t.Errorf("statusOf(ErrTooMany) = %d %s %v", status, code, internal)
	}
	if e := (&Error{Status: 429, Code: codeTooMany}); !errors.Is(e, gate.ErrTooMany) {
		t.Error("a 429 answer is not gate.ErrTooMany to the client")
	}
}

// TestLimitListener: connections over the cap get a 503 and are closed;
// closing one frees a place.
func TestLimitListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv.Listener = LimitListener(ln, 2, true)
	srv.Start()
	defer srv.Close()
	addr := ln.Addr().String()
	get := func(c net.Conn) string {
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		return resp.Status
	}
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if got := get(c); got != "200 OK" {
			t.Fatalf("a connection under the cap: %s", got)
		}
		held = append(held, c)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if got := get(c); !strings.HasPrefix(got, "503") {
		t.Errorf("a connection over the cap: %s, want 503", got)
	}
	c.Close()
	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		got := get(c)
		c.Close()
		if got == "200 OK" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no place freed after a close: %s", got)
		}
		time.Sleep(10 * time.Millisecond) // the server notices the close
	}
}

// TestBodyDeadline: a body that stops coming is cut off; a handler that
// waits after reading its body is not.
func TestBodyDeadline(t *testing.T) {
	release := make(chan struct{})
	h := BodyDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "body: "+err.Error(), http.StatusRequestTimeout)
			return
		}
		select { // a long-poll after the body
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "waited")
	}), 50*time.Millisecond)
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a part")
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("stalled body: %s, want it cut off", resp.Status)
		}
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("stalled body never cut off: %v", err)
	}

	// A whole body, then a wait several times the body deadline.
	done := make(chan string, 1)
	go func() {
		resp, err := http.Post(srv.URL, "text/plain", strings.NewReader("whole"))
		if err != nil {
			done <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- string(b)
	}()
	timer := time.NewTimer(300 * time.Millisecond) // six body deadlines
	select {
	case got := <-done:
		t.Fatalf("the wait ended early: %q", got)
	case <-timer.C:
	}
	close(release)
	if got := <-done; got != "waited" {
		t.Errorf("after the wait: %q, want waited", got)
	}
}

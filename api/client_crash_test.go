package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"approvalbot/gate"
)

// crashing wraps a handler: the first drop requests are handled (so a
// submit is stored) but their connection is then closed without an
// answer, as a daemon SIGKILLed mid-request leaves it; later requests are
// answered normally.
type crashing struct {
	h    http.Handler
	drop atomic.Int32
	seen atomic.Int32
}

func (c *crashing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.seen.Add(1)
	if c.drop.Add(-1) < 0 {
		c.h.ServeHTTP(w, r)
		return
	}
	c.h.ServeHTTP(httptest.NewRecorder(), r)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// TestSubmitAndWaitCrashAfterSend: a daemon that took the submit and died
// before answering was reached; the client must retry with the same key
// (attaching, never a second approval) however short its connect grace,
// and never report the daemon unreachable.
func TestSubmitAndWaitCrashAfterSend(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, openConfig())
	cr := &crashing{h: e.srv}
	cr.drop.Store(3)
	ts := httptest.NewServer(cr)
	t.Cleanup(ts.Close)
	c := NewClient(ts.URL, "")
	call := gate.Call{Agent: "a", Tool: "Bash", Input: json.RawMessage(`{"command":"make"}`), IdempotencyKey: "k"}
	res := make(chan *gate.Approval, 1)
	errs := make(chan error, 1)
	go func() {
		a, err := c.SubmitAndWait(ctx, call, 1) // 1ns: the grace is over before the first retry
		res <- a
		errs <- err
	}()
	eventually(t, "the dropped requests", func() bool { return cr.seen.Load() > 3 })
	eventually(t, "approval pending", func() bool { l, _ := e.g.List(ctx, gate.StatusPending); return len(l) == 1 })
	l, _ := e.g.List(ctx, "")
	if len(l) != 1 {
		t.Fatalf("%d approvals for one key, want 1", len(l))
	}
	if _, err := NewClient(ts.URL, tokLocal).Approve(ctx, l[0].ID, false, "", "ana"); err != nil {
		t.Fatal(err)
	}
	if a, err := <-res, <-errs; err != nil || a == nil || a.Status != gate.StatusApproved || a.ID != l[0].ID {
		t.Fatalf("got %+v, %v; want approval %s approved", a, err, l[0].ID)
	}
}

package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

// TestBatchRoute: POST /v1/approvals/batch on the real gate needs the
// approver credential, decides each call only for its digest, and says
// per call what happened; a bad request decides nothing.
func TestBatchRoute(t *testing.T) {
	ctx := ctxT(t)
	env := gatetest.New(t, gatetest.Options{})
	ts := httptest.NewServer(NewServer(tokenConfig(), env.G, nil))
	t.Cleanup(ts.Close)
	admin := NewClient(ts.URL, tokAdmin)
	agent := NewClient(ts.URL, tokAlice)

	a1 := env.Ask(t, gatetest.Bash("make one"))
	a2 := env.Ask(t, gatetest.Bash("make two"))
	a3 := env.Ask(t, gatetest.Bash("make three"))
	calls := []gate.BatchMember{{ID: a1.ID, Digest: a1.Digest[:16]}, {ID: a2.ID, Digest: a2.Digest}, {ID: a3.ID, Digest: "00000000"}}

	var ae *Error
	if _, err := agent.DecideBatch(ctx, calls, true, "", false, ""); !errors.As(err, &ae) || ae.Status != http.StatusForbidden {
		t.Fatalf("an agent token decided a batch: %v", err)
	}
	if _, err := admin.DecideBatch(ctx, []gate.BatchMember{{ID: a1.ID}}, true, "", false, ""); !errors.Is(err, gate.ErrInvalid) {
		t.Fatalf("a call without its digest: %v, want invalid", err)
	}
	if got := env.Get(t, a1.ID); got.Status != gate.StatusPending {
		t.Fatalf("a refused batch decided %s", got.Status)
	}
	if _, err := env.G.Decide(ctx, a2.ID, gate.Decision{By: "bob", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	rs, err := admin.DecideBatch(ctx, calls, true, "", false, "me@host")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{gate.BatchDecided, gate.BatchAlreadyDecided, gate.BatchDigestMismatch}
	for i, r := range rs {
		if r.Result != want[i] || r.ID != calls[i].ID {
			t.Errorf("call %d: %s %s, want %s", i, r.ID, r.Result, want[i])
		}
	}
	if got := env.Get(t, a1.ID); got.Status != gate.StatusApproved || got.DecidedBy != "ana (me@host)" {
		t.Errorf("a1: %s by %q", got.Status, got.DecidedBy)
	}
	if rs[1].Approval == nil || rs[1].Approval.DecidedBy != "bob" {
		t.Errorf("already decided: %+v, want bob's decision", rs[1].Approval)
	}
	if got := env.Get(t, a3.ID); got.Status != gate.StatusPending {
		t.Errorf("the call with another digest is %s", got.Status)
	}
}

package watch

import (
	"strings"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/gate"
)

// TestSameInstantKeepsArrivalOrder: calls created at the same instant are
// shown in the order the daemon sent them, not by their random ids.
func TestSameInstantKeepsArrivalOrder(t *testing.T) {
	m := NewModel(testGuard)
	for _, id := range []string{"zz", "mm", "aa"} {
		a := bashApproval(id, "make "+id, t0)
		a.SessionID = "s-" + id
		m, _ = Update(m, required(a, t0))
	}
	if got := ids(m); got != "zz mm aa" || m.ShownID() != "zz" {
		t.Fatalf("queue %q shown %q, want the order they arrived in", got, m.ShownID())
	}
}

// TestStillWaitingAfterReconnect: a call that waited through a lost
// connection says so once the daemon is reached again; a new one does not.
func TestStillWaitingAfterReconnect(t *testing.T) {
	a := bashApproval("a1", "make deploy", t0)
	m := shown(a)
	if s := plain(Render(m, 100, 60, t0, Style{})); strings.Contains(s, "Still waiting") {
		t.Fatalf("a fresh box says still waiting:\n%s", s)
	}
	m, _ = Update(m, DisconnectedMsg{Err: "EOF", At: t0.Add(time.Second)})
	back := t0.Add(5 * time.Second)
	m, _ = Update(m, required(a, back)) // the replay comes before the list
	m, _ = Update(m, SyncedMsg{Pending: []*gate.Approval{a}, At: back.Add(time.Second)})
	want := "Still waiting (the connection to approvalbot was lost; back at 2026-03-01 12:00:05 UTC)"
	if s := plain(Render(m, 120, 60, back, Style{})); !strings.Contains(s, want) {
		t.Fatalf("no %q:\n%s", want, s)
	}
	if m.ShownID() != "a1" || m.GuardUntil() != t0.Add(testGuard) {
		t.Fatalf("the box was shown anew: %q, guard until %v", m.ShownID(), m.GuardUntil())
	}
}

// TestDigestRefusalAndEsc: a decision refused for another input says so,
// and Esc dismisses the note.
func TestDigestRefusalAndEsc(t *testing.T) {
	a := bashApproval("a1", "make deploy", t0)
	m, acts := press(shown(a), seq("1"))
	if len(acts) != 1 {
		t.Fatal("no decision")
	}
	err := &api.Error{Status: 409, Code: "digest_mismatch", Message: gate.ErrDigestMismatch.Error()}
	m, _ = Update(m, DecidedMsg{ID: "a1", Kind: DecideApprove, Err: err, At: t0})
	if !strings.Contains(m.status, "not for the input shown") || m.ShownID() != "a1" {
		t.Fatalf("status %q shown %q", m.status, m.ShownID())
	}
	if m, _ = press(m, seq(Esc)); m.status != "" {
		t.Fatalf("Esc left the note %q", m.status)
	}
}

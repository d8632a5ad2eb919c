package watch

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"approvalbot/gate"
)

// session returns approvals of one agent session, a second apart, each
// with its own digest.
func session(cmds ...string) []*gate.Approval {
	var out []*gate.Approval
	for i, c := range cmds {
		a := bashApproval(fmt.Sprintf("c%d", i+1), c, t0.Add(time.Duration(i)*time.Second))
		a.Digest = fmt.Sprintf("%064x", i+1)
		out = append(out, a)
	}
	return out
}

func members(as ...*gate.Approval) []gate.BatchMember {
	var out []gate.BatchMember
	for _, a := range as {
		out = append(out, gate.BatchMember{ID: a.ID, Digest: a.Digest})
	}
	return out
}

func required(a *gate.Approval, at time.Time) Msg {
	return EventMsg{Event: gate.Event{Type: gate.EventApprovalRequired, Approval: a}, At: at}
}

func resolved(a *gate.Approval, at time.Time) Msg {
	return EventMsg{Event: gate.Event{Type: gate.EventApprovalResolved, Approval: a}, At: at}
}

func showing(as ...*gate.Approval) Model {
	m, _ := Update(NewModel(testGuard), SyncedMsg{Pending: as, At: t0})
	return m
}

func TestBatchKeys(t *testing.T) {
	s := session("git push origin main", "rm -rf build", "make deploy")
	all := members(s...)
	do := func(d Decision) Action { return Action{Decide: &d} }
	tests := []struct {
		name string
		keys []Key
		want []Action
	}{
		{"4 approves all shown", seq("4"), []Action{do(Decision{ID: "c1", Kind: DecideApproveAll, Members: all})}},
		{"5 selects deny all, enter denies", seq("5", Enter), []Action{do(Decision{ID: "c1", Kind: DecideDenyAll, Members: all})}},
		{"5 then a reason", seq("5", "not now", Enter), []Action{do(Decision{ID: "c1", Kind: DecideDenyAll, Reason: "not now", Members: all})}},
		{"5 alone decides nothing", seq("5"), nil},
		{"arrows reach the batch choices", seq(Down, Down, Down, Enter), []Action{do(Decision{ID: "c1", Kind: DecideApproveAll, Members: all})}},
		{"down is clamped at deny all", seq(Down, Down, Down, Down, Down, Down, Enter), []Action{do(Decision{ID: "c1", Kind: DecideDenyAll, Members: all})}},
		// A single key's decision is bound to the digest of the call in focus.
		{"single keys decide the call in focus", seq("1"), []Action{do(Decision{ID: "c1", Kind: DecideApprove, Digest: s[0].Digest})}},
		{"right moves the focus", seq(Right, "1"), []Action{do(Decision{ID: "c2", Kind: DecideApprove, Digest: s[1].Digest})}},
		{"left wraps to the last call", seq(Left, "s"), []Action{do(Decision{ID: "c3", Kind: DecideStop, Digest: s[2].Digest})}},
		{"tab moves the focus too", seq(Tab, Tab, "3", "no", Enter), []Action{do(Decision{ID: "c3", Kind: DecideDeny, Reason: "no", Digest: s[2].Digest})}},
		{"always for the call in focus", seq(Right, "2", Enter), []Action{do(Decision{ID: "c2", Kind: DecideAlways, Scope: gate.ScopeSession, Digest: s[1].Digest})}},
		{"a letter is a reason for the call in focus", seq(Right, "nope", Enter), []Action{do(Decision{ID: "c2", Kind: DecideDeny, Reason: "nope", Digest: s[1].Digest})}},
		{"4 inside a reason is text", seq("3", "4", Enter), []Action{do(Decision{ID: "c1", Kind: DecideDeny, Reason: "4", Digest: s[0].Digest})}},
		{"one decision at a time", seq("4", "1", "4"), []Action{do(Decision{ID: "c1", Kind: DecideApproveAll, Members: all})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := press(showing(s...), tt.keys)
			if !sameActions(got, tt.want) {
				t.Errorf("got %s, want %s", fmtActions(got), fmtActions(tt.want))
			}
		})
	}
}

func TestBatchNeedsTwoOfOneSession(t *testing.T) {
	a := bashApproval("a1", "ls", t0)
	b := bashApproval("b2", "ls -la", t0.Add(time.Second))
	b.SessionID = "another"
	c := bashApproval("c3", "pwd", t0.Add(2*time.Second))
	c.SessionID = ""
	d := bashApproval("d4", "pwd", t0.Add(3*time.Second))
	d.SessionID = ""
	for _, tc := range []struct {
		name string
		m    Model
	}{
		{"one call", showing(a)},
		{"two sessions", showing(a, b)},
		{"no session", showing(c, d)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.Shown(); len(got) != 1 {
				t.Fatalf("shown %v, want one call", got)
			}
			if _, acts := press(tc.m, seq("4", "5", Enter)); len(acts) != 1 || acts[0].Decide.Kind != DecideApprove {
				t.Fatalf("batch keys on a single box: %s", fmtActions(acts))
			}
		})
	}
}

func TestBatchAtMostMaxBatch(t *testing.T) {
	var cmds []string
	for i := range gate.MaxBatch + 2 {
		cmds = append(cmds, fmt.Sprintf("echo %d", i))
	}
	s := session(cmds...)
	m := showing(s...)
	if got := m.Shown(); len(got) != gate.MaxBatch {
		t.Fatalf("shown %d calls, want %d", len(got), gate.MaxBatch)
	}
	_, acts := press(m, seq("4"))
	if len(acts) != 1 || !slices.Equal(acts[0].Decide.Members, members(s[:gate.MaxBatch]...)) {
		t.Fatalf("approve all: %s", fmtActions(acts))
	}
	if screen := plain(Render(m, 100, 200, t0.Add(time.Minute), Style{})); !strings.Contains(screen, "2 more waiting") ||
		!strings.Contains(screen, fmt.Sprintf("4 Approve all %d", gate.MaxBatch)) {
		t.Fatalf("screen:\n%s", screen)
	}
}

// TestBatchLaterCallStaysPending: a press decides the calls shown when it
// was pressed; a call that arrives after is not among them, and one that
// arrives just before the press (within the guard) voids the press.
func TestBatchLaterCallStaysPending(t *testing.T) {
	s := session("one", "two", "three")
	a, b, c := s[0], s[1], s[2]

	t.Run("arrives while the decision is on its way", func(t *testing.T) {
		m, acts := press(showing(a, b), seq("4"))
		if len(acts) != 1 || !slices.Equal(acts[0].Decide.Members, members(a, b)) {
			t.Fatalf("approve all: %s", fmtActions(acts))
		}
		at := m.GuardUntil().Add(time.Second)
		m, _ = Update(m, required(c, at))
		if got := m.Shown(); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
			t.Fatalf("shown %v", got)
		}
		// No key counts while the batch is on its way.
		if _, act := Update(m, KeyMsg{Key: Rune('1'), At: at.Add(time.Hour)}); act.Decide != nil {
			t.Fatalf("a key decided while sending: %+v", act.Decide)
		}
		m, _ = Update(m, DecidedMsg{ID: "c1", Kind: DecideApproveAll, At: at, Results: []gate.BatchResult{
			{ID: "c1", Result: gate.BatchDecided, Approval: final(a, gate.StatusApproved, "dev", "watch", "")},
			{ID: "c2", Result: gate.BatchDecided, Approval: final(b, gate.StatusApproved, "dev", "watch", "")},
		}})
		if got := m.Shown(); !slices.Equal(got, []string{"c3"}) || m.sending != "" {
			t.Fatalf("shown %v (sending %q), want c3 alone, still pending", got, m.sending)
		}
		if lg := m.Log(); len(lg) != 2 || !strings.HasPrefix(lg[0].Text, "Approved by dev") {
			t.Fatalf("log %+v", lg)
		}
		// c3 is decided on its own, after its guard.
		_, act := Update(m, KeyMsg{Key: Rune('1'), At: m.GuardUntil()})
		if act.Decide == nil || act.Decide.ID != "c3" || act.Decide.Kind != DecideApprove {
			t.Fatalf("c3: %+v", act.Decide)
		}
	})

	t.Run("arrives just before the press", func(t *testing.T) {
		m := showing(a, b)
		arrived := m.GuardUntil().Add(time.Minute)
		m, _ = Update(m, required(c, arrived))
		// The key was read before the screen with c could have been
		// seen: dropped, and nothing is decided.
		if _, act := Update(m, KeyMsg{Key: Rune('4'), At: arrived.Add(testGuard / 2)}); act.Decide != nil {
			t.Fatalf("a key pressed for the older view decided %s", fmtActions([]Action{act}))
		}
		// After the guard, the press covers what is on the screen now.
		_, act := Update(m, KeyMsg{Key: Rune('4'), At: arrived.Add(testGuard)})
		if act.Decide == nil || !slices.Equal(act.Decide.Members, members(a, b, c)) {
			t.Fatalf("approve all: %s", fmtActions([]Action{act}))
		}
	})

	t.Run("a call decided elsewhere leaves the view, keys stay live", func(t *testing.T) {
		m := showing(a, b, c)
		m, _ = press(m, seq(Right, Right)) // focus c3
		at := m.GuardUntil().Add(time.Minute)
		m, _ = Update(m, resolved(final(b, gate.StatusDenied, "@ana", "telegram", ""), at))
		if got := m.Shown(); !slices.Equal(got, []string{"c1", "c3"}) || m.Focus() != "c3" {
			t.Fatalf("shown %v focus %q", got, m.Focus())
		}
		_, act := Update(m, KeyMsg{Key: Rune('4'), At: at})
		if act.Decide == nil || !slices.Equal(act.Decide.Members, members(a, c)) {
			t.Fatalf("approve all: %s", fmtActions([]Action{act}))
		}
	})
}

func TestBatchDecided(t *testing.T) {
	s := session("one", "two")
	m, _ := press(showing(s...), seq("5", "no", Enter))
	t.Run("partly decided elsewhere", func(t *testing.T) {
		m, _ := Update(m, DecidedMsg{ID: "c1", Kind: DecideDenyAll, At: t0, Results: []gate.BatchResult{
			{ID: "c1", Result: gate.BatchDecided, Approval: final(s[0], gate.StatusDenied, "dev", "watch", "no")},
			{ID: "c2", Result: gate.BatchAlreadyDecided, Approval: final(s[1], gate.StatusApproved, "@ana", "slack", "")},
		}})
		lg := m.Log()
		if m.ShownID() != "" || len(lg) != 3 || !strings.HasPrefix(lg[2].Text, "Denied 1 of 2; already decided (approved by @ana)") {
			t.Fatalf("shown %q log %+v", m.ShownID(), lg)
		}
	})
	t.Run("a failure keeps the view", func(t *testing.T) {
		m, _ := Update(m, DecidedMsg{ID: "c1", Kind: DecideDenyAll, Err: fmt.Errorf("connection reset"), At: t0})
		if got := m.Shown(); len(got) != 2 || !strings.Contains(m.status, "nothing was decided") {
			t.Fatalf("shown %v status %q", got, m.status)
		}
		// Deny all is still selected, with its reason: Enter tries again.
		if _, acts := press(m, seq(Enter)); len(acts) != 1 || acts[0].Decide.Reason != "no" || len(acts[0].Decide.Members) != 2 {
			t.Fatalf("no retry after a failure: %s", fmtActions(acts))
		}
	})
}

package watch

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"approvalbot/gate"
)

// shown returns a connected model showing a at t0.
func shown(a *gate.Approval) Model {
	m, _ := Update(NewModel(testGuard), SyncedMsg{Pending: []*gate.Approval{a}, At: t0})
	return m
}

func runes(s string) []Key {
	var ks []Key
	for _, r := range s {
		ks = append(ks, Rune(r))
	}
	return ks
}

func seq(parts ...any) []Key {
	var ks []Key
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			ks = append(ks, runes(p)...)
		case Key:
			ks = append(ks, p)
		}
	}
	return ks
}

// press feeds keys one per millisecond after the guard and returns every
// action that was not empty.
func press(m Model, keys []Key) (Model, []Action) {
	var acts []Action
	at := m.GuardUntil()
	for _, k := range keys {
		var a Action
		m, a = Update(m, KeyMsg{Key: k, At: at})
		if a.Decide != nil || a.Quit {
			acts = append(acts, a)
		}
		at = at.Add(time.Millisecond)
	}
	return m, acts
}

func TestKeys(t *testing.T) {
	approve := Decision{ID: "a1", Kind: DecideApprove}
	always := func(s gate.Scope) Decision { return Decision{ID: "a1", Kind: DecideAlways, Scope: s} }
	hour, midnight := t0.Add(time.Hour), time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	alwaysUntil := func(at time.Time) Decision {
		return Decision{ID: "a1", Kind: DecideAlways, Scope: gate.ScopeAgent, ExpiresAt: &at}
	}
	deny := func(r string) Decision { return Decision{ID: "a1", Kind: DecideDeny, Reason: r} }
	stop := Decision{ID: "a1", Kind: DecideStop}
	quit := Action{Quit: true}
	do := func(d Decision) Action { return Action{Decide: &d} }

	tests := []struct {
		name string
		keys []Key
		want []Action // nil: nothing decided
	}{
		{"digit 1 approves", seq("1"), []Action{do(approve)}},
		{"enter on the default approves", seq(Enter), []Action{do(approve)}},
		{"down enter is always for this session", seq(Down, Enter), []Action{do(always(gate.ScopeSession))}},
		{"digit 2 selects always, enter saves", seq("2", Enter), []Action{do(always(gate.ScopeSession))}},
		{"digit 2 alone decides nothing", seq("2"), nil},
		{"right is this agent for an hour", seq("2", Right, Enter), []Action{do(alwaysUntil(hour))}},
		{"right twice is this agent for today", seq("2", Right, Right, Enter), []Action{do(alwaysUntil(midnight))}},
		{"right three times is this agent with no expiry", seq("2", Right, Right, Right, Enter), []Action{do(always(gate.ScopeAgent))}},
		{"tab four times is back to session", seq("2", Tab, Tab, Tab, Tab, Enter), []Action{do(always(gate.ScopeSession))}},
		{"left wraps to no expiry", seq(Down, Left, Enter), []Action{do(always(gate.ScopeAgent))}},
		{"left from an hour is the session", seq("2", Right, Left, Enter), []Action{do(always(gate.ScopeSession))}},
		{"scope keys do nothing off always", seq(Right, Enter), []Action{do(approve)}},
		{"digit 3 then a reason", seq("3", "no", Enter), []Action{do(deny("no"))}},
		{"a letter starts the reason", seq("too risky", Enter), []Action{do(deny("too risky"))}},
		{"digit 3 alone decides nothing", seq("3"), nil},
		{"deny without a reason", seq("3", Enter), []Action{do(deny(""))}},
		{"arrows down to deny", seq(Down, Down, Enter), []Action{do(deny(""))}},
		{"down is clamped at deny", seq(Down, Down, Down, Down, Enter), []Action{do(deny(""))}},
		{"up is clamped at approve", seq(Up, Up, Enter), []Action{do(approve)}},
		{"s is stop on a fresh box", seq("s"), []Action{do(stop)}},
		{"s after 3 is part of the reason", seq("3", "sudo", Enter), []Action{do(deny("sudo"))}},
		{"s inside a reason is a letter", seq("ls is fine", Enter), []Action{do(deny("ls is fine"))}},
		{"digits inside a reason are text", seq("x1 2", Enter), []Action{do(deny("x1 2"))}},
		{"digits after 3 are text", seq("3", "12", Enter), []Action{do(deny("12"))}},
		{"backspace edits", seq("nope", Backspace, Backspace, Enter), []Action{do(deny("no"))}},
		{"backspace on nothing", seq(Backspace, "1"), []Action{do(approve)}},
		{"backspace to empty keeps deny selected", seq("n", Backspace, "s", Enter), []Action{do(deny("s"))}},
		{"esc clears the reason", seq("nope", Esc, "ok", Enter), []Action{do(deny("ok"))}},
		{"esc then enter denies without reason", seq("nope", Esc, Enter), []Action{do(deny(""))}},
		{"moving up from a reason approves on enter", seq("x", Up, Up, Enter), []Action{do(approve)}},
		{"a digit with a reason typed is text", seq("x", Up, "1", Enter), []Action{do(deny("x1"))}},
		{"a leading space is ignored", seq(" ", "1"), []Action{do(approve)}},
		{"punctuation does not start a reason", seq("-", "1"), []Action{do(approve)}},
		{"capital S starts a reason", seq("Stop it", Enter), []Action{do(deny("Stop it"))}},
		{"unicode letters start a reason", seq("é", Enter), []Action{do(deny("é"))}},
		{"reason is trimmed", seq("3", "  no  ", Enter), []Action{do(deny("no"))}},
		{"other digits do nothing", seq("9", "0", Enter), []Action{do(approve)}},
		{"page keys decide nothing", seq(PgDn, PgUp), nil},
		{"unknown keys decide nothing", seq(Key{Kind: KeyUnknown}, Enter), []Action{do(approve)}},
		{"ctrl+c quits", seq(CtrlC), []Action{quit}},
		{"ctrl+c quits mid-reason", seq("abc", CtrlC), []Action{quit}},
		{"one decision per box", seq("1", "1", Enter, "s"), []Action{do(approve)}},
		{"ctrl+c works while sending", seq("1", CtrlC), []Action{do(approve), quit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := press(shown(bashApproval("a1", "git push origin main", t0)), tt.keys)
			if !sameActions(got, tt.want) {
				t.Errorf("got %s, want %s", fmtActions(got), fmtActions(tt.want))
			}
		})
	}
}

func TestReasonLimit(t *testing.T) {
	m, _ := press(shown(bashApproval("a1", "ls", t0)), runes(strings.Repeat("x", MaxReason+20)))
	_, acts := press(m, seq(Enter))
	if len(acts) != 1 || len([]rune(acts[0].Decide.Reason)) != MaxReason {
		t.Fatalf("reason not limited to %d runes: %s", MaxReason, fmtActions(acts))
	}
}

func TestStaleInput(t *testing.T) {
	a, b := bashApproval("a1", "rm -rf build", t0), bashApproval("b2", "git push", t0.Add(time.Second))

	t.Run("keys within the guard are dropped", func(t *testing.T) {
		m := shown(a)
		for _, at := range []time.Time{t0.Add(-time.Second), t0, t0.Add(testGuard - time.Nanosecond)} {
			var act Action
			m, act = Update(m, KeyMsg{Key: Rune('1'), At: at})
			if act.Decide != nil {
				t.Fatalf("key at %v decided %+v", at.Sub(t0), act.Decide)
			}
		}
		if _, act := Update(m, KeyMsg{Key: Rune('1'), At: t0.Add(testGuard)}); act.Decide == nil {
			t.Fatal("key after the guard did not decide")
		}
	})

	t.Run("keys with no box are dropped", func(t *testing.T) {
		m, _ := Update(NewModel(testGuard), SyncedMsg{At: t0})
		m, act := Update(m, KeyMsg{Key: Rune('1'), At: t0.Add(time.Hour)})
		if act.Decide != nil {
			t.Fatal("a key with no box decided")
		}
		// The box appears after the key: still nothing.
		m, act = Update(m, EventMsg{Event: gate.Event{Type: gate.EventApprovalRequired, Approval: a}, At: t0.Add(2 * time.Hour)})
		if act.Decide != nil || m.ShownID() != "a1" {
			t.Fatalf("shown %q, action %+v", m.ShownID(), act)
		}
	})

	t.Run("a key typed for the old box does not decide the new one", func(t *testing.T) {
		m := shown(a)
		m, _ = Update(m, EventMsg{Event: gate.Event{Type: gate.EventApprovalRequired, Approval: b}, At: t0})
		// The person types a reason for a, then a is approved elsewhere.
		m, _ = press(m, runes("wai"))
		swap := t0.Add(time.Minute)
		m, _ = Update(m, EventMsg{Event: gate.Event{Type: gate.EventApprovalResolved, Approval: final(a, gate.StatusApproved, "@ana", "telegram", "")}, At: swap})
		if m.ShownID() != "b2" {
			t.Fatalf("shown %q, want b2", m.ShownID())
		}
		// "t" and Enter were read just before b appeared: dropped.
		for _, k := range seq("t", Enter) {
			var act Action
			m, act = Update(m, KeyMsg{Key: k, At: swap.Add(testGuard / 2)})
			if act.Decide != nil {
				t.Fatalf("stale key decided %+v", act.Decide)
			}
		}
		// The new box starts fresh: no reason, Approve selected.
		if m.reason != "" || m.sel != ChoiceApprove {
			t.Fatalf("new box inherited reason %q, selection %d", m.reason, m.sel)
		}
	})
}

func TestNothingDecidedWhileDisconnected(t *testing.T) {
	a := bashApproval("a1", "make deploy", t0)
	// Before the first sync, an event alone does not make the model connected.
	m, _ := Update(NewModel(testGuard), EventMsg{Event: gate.Event{Type: gate.EventApprovalRequired, Approval: a}, At: t0})
	if m, acts := press(m, seq("1", Enter, "s")); len(acts) != 0 || !strings.Contains(m.status, "nothing was decided") {
		t.Fatalf("decided before connecting: %s (status %q)", fmtActions(acts), m.status)
	}
	m = shown(a)
	m, _ = Update(m, DisconnectedMsg{Err: "connection refused", RetryAt: t0.Add(time.Second), At: t0})
	if _, acts := press(m, seq("1", Enter, "3", "x", Enter, "s")); len(acts) != 0 {
		t.Fatalf("decided while disconnected: %s", fmtActions(acts))
	}
	m, _ = Update(m, SyncedMsg{Pending: []*gate.Approval{a}, At: t0.Add(2 * time.Second)})
	if _, acts := press(m, seq("1")); len(acts) != 1 {
		t.Fatalf("after reconnecting: %s", fmtActions(acts))
	}
}

func TestEvents(t *testing.T) {
	a, b, c := bashApproval("a1", "one", t0), bashApproval("b2", "two", t0.Add(time.Second)), bashApproval("c3", "three", t0.Add(2*time.Second))
	req := func(x *gate.Approval) Msg {
		return EventMsg{Event: gate.Event{Type: gate.EventApprovalRequired, Approval: x}, At: t0}
	}
	res := func(x *gate.Approval) Msg {
		return EventMsg{Event: gate.Event{Type: gate.EventApprovalResolved, Approval: x}, At: t0}
	}
	m := NewModel(testGuard)
	for _, msg := range []Msg{req(c), req(a), req(b), req(a)} {
		m, _ = Update(m, msg)
	}
	if got := ids(m); got != "a1 b2 c3" {
		t.Fatalf("queue %q, want oldest first without duplicates", got)
	}
	m, _ = Update(m, res(final(b, gate.StatusDenied, "bob", "slack", "not now")))
	m, _ = Update(m, res(final(a, gate.StatusExpired, "", "timeout", "")))
	if got := ids(m); got != "c3" || m.ShownID() != "c3" {
		t.Fatalf("queue %q shown %q", got, m.ShownID())
	}
	lg := m.Log()
	if len(lg) != 2 || !strings.HasPrefix(lg[0].Text, "Denied by bob via Slack") || !strings.Contains(lg[0].Text, "not now") ||
		!strings.HasPrefix(lg[1].Text, "Expired") || lg[0].Good {
		t.Fatalf("log %+v", lg)
	}
	// A resolution for something not shown changes nothing.
	m2, _ := Update(m, res(final(a, gate.StatusApproved, "x", "cli", "")))
	if len(m2.Log()) != 2 {
		t.Fatalf("unknown resolution logged: %+v", m2.Log())
	}
	// A sync after a reconnect drops what was decided while away, keeps
	// what is still pending and adds what is new.
	m, _ = Update(m, DisconnectedMsg{Err: "EOF", At: t0})
	d := bashApproval("d4", "four", t0.Add(3*time.Second))
	m, _ = Update(m, SyncedMsg{Pending: []*gate.Approval{d}, At: t0})
	if got := ids(m); got != "d4" {
		t.Fatalf("after sync queue %q, want d4", got)
	}
	if l := m.Log(); !strings.Contains(l[len(l)-1].Text, "connection was down") {
		t.Fatalf("log %+v", l)
	}
}

func TestDecided(t *testing.T) {
	a := bashApproval("a1", "git push", t0)
	m, acts := press(shown(a), seq("1"))
	if len(acts) != 1 {
		t.Fatal("no decision")
	}
	t.Run("success closes the box with who", func(t *testing.T) {
		m, _ := Update(m, DecidedMsg{ID: "a1", Approval: final(a, gate.StatusApproved, "dev", "api", ""), At: t0})
		if m.ShownID() != "" || len(m.Log()) != 1 || !strings.HasPrefix(m.Log()[0].Text, "Approved by dev") || !m.Log()[0].Good {
			t.Fatalf("shown %q log %+v", m.ShownID(), m.Log())
		}
		// The event that follows adds no second line.
		m, _ = Update(m, EventMsg{Event: gate.Event{Type: gate.EventApprovalResolved, Approval: final(a, gate.StatusApproved, "dev", "api", "")}, At: t0})
		if len(m.Log()) != 1 {
			t.Fatalf("log %+v", m.Log())
		}
	})
	t.Run("someone else was first", func(t *testing.T) {
		m, _ := Update(m, DecidedMsg{ID: "a1", Approval: final(a, gate.StatusDenied, "@ana", "telegram", "no"), Err: gate.ErrAlreadyDecided, At: t0})
		if m.ShownID() != "" || !strings.HasPrefix(m.Log()[0].Text, "Denied by @ana via Telegram") {
			t.Fatalf("log %+v", m.Log())
		}
	})
	t.Run("already decided without the approval waits for the event", func(t *testing.T) {
		m, _ := Update(m, DecidedMsg{ID: "a1", Err: gate.ErrAlreadyDecided, At: t0})
		if m.ShownID() != "a1" || !strings.Contains(m.status, "already decided") {
			t.Fatalf("shown %q status %q", m.ShownID(), m.status)
		}
	})
	t.Run("a failure keeps the box and allows another try", func(t *testing.T) {
		m, _ := Update(m, DecidedMsg{ID: "a1", Err: errors.New("connection reset"), At: t0})
		if m.ShownID() != "a1" || !strings.Contains(m.status, "connection reset") {
			t.Fatalf("shown %q status %q", m.ShownID(), m.status)
		}
		if _, acts := press(m, seq("1")); len(acts) != 1 {
			t.Fatal("no retry after a failure")
		}
	})
}

func ids(m Model) string {
	var s []string
	for _, it := range m.pending {
		s = append(s, it.a.ID)
	}
	return strings.Join(s, " ")
}

func sameActions(a, b []Action) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Quit != b[i].Quit || (a[i].Decide == nil) != (b[i].Decide == nil) {
			return false
		}
		if a[i].Decide != nil && !sameDecision(*a[i].Decide, *b[i].Decide) {
			return false
		}
	}
	return true
}

// sameDecision compares decisions, an expiry to the second (keys are
// pressed a few milliseconds apart).
func sameDecision(a, b Decision) bool {
	ea, eb := a.ExpiresAt, b.ExpiresAt
	a.ExpiresAt, b.ExpiresAt = nil, nil
	if (ea == nil) != (eb == nil) || (ea != nil && !ea.Truncate(time.Second).Equal(eb.Truncate(time.Second))) {
		return false
	}
	return reflect.DeepEqual(a, b)
}

func fmtActions(as []Action) string {
	var s []string
	for _, a := range as {
		switch {
		case a.Quit:
			s = append(s, "quit")
		case a.Decide != nil:
			d := a.Decide
			x := string(d.Kind) + " " + string(d.Scope) + " " + d.Reason
			if d.ExpiresAt != nil {
				x += " until " + d.ExpiresAt.Format(time.RFC3339)
			}
			for _, mb := range d.Members {
				x += " " + mb.ID
			}
			s = append(s, strings.TrimSpace(x))
		}
	}
	return "[" + strings.Join(s, "; ") + "]"
}

func TestAlwaysNeedsAPattern(t *testing.T) {
	a := bashApproval("a1", "echo $(date)", t0)
	a.Evaluation.Always, a.Evaluation.AlwaysRules = nil, nil
	m, acts := press(shown(a), seq("2", Enter))
	if len(acts) != 0 || !strings.Contains(m.status, "no Always pattern") {
		t.Fatalf("always without a pattern: %s, status %q", fmtActions(acts), m.status)
	}
	if _, acts := press(m, seq("1")); len(acts) != 1 || acts[0].Decide.Kind != DecideApprove {
		t.Fatalf("approve after: %s", fmtActions(acts))
	}
}

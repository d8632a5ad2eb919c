package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"approvalbot/gate"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

func newApproval(id, agent, key string) *gate.Approval {
	return &gate.Approval{
		ID:             id,
		Status:         gate.StatusPending,
		Agent:          agent,
		SessionID:      "sess-1",
		Tool:           "Bash",
		Input:          []byte(`{"command":"rm -rf build"}`),
		Cwd:            "/home/dev/project",
		IdempotencyKey: key,
		Digest:         "digest-of-rm-rf-build", // one call, whatever the id

		Evaluation: gate.Evaluation{
			Decision: gate.Ask, Reason: "no rule matched", Kind: gate.KindShell,
			Commands: []gate.Verdict{{Kind: "command", Subject: "rm -rf build", Decision: gate.Ask}},
			Always:   []string{"rm *"},
		},
		CreatedAt: t0,
		Deadline:  t0.Add(10 * time.Minute),
	}
}

func decide(status gate.Status, by string) func(*gate.Approval) error {
	return func(a *gate.Approval) error {
		if a.Status.Final() {
			return gate.ErrAlreadyDecided
		}
		at := t0.Add(time.Minute)
		a.Status, a.DecidedBy, a.DecidedAt, a.Via = status, by, &at, "cli"
		if status == gate.StatusApproved || status == gate.StatusApprovedAlways {
			a.Decision = gate.Allow
		} else {
			a.Decision = gate.Deny
		}
		return nil
	}
}

func ids(as []*gate.Approval) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}

func TestApprovalsRoundTripAndPersist(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	want := newApproval("a1", "claude", "toolu_1")
	want.Messages = []gate.MessageRef{{Frontend: "telegram", ChatID: "42", MessageID: "7", SentAt: t0}}
	got, err := s.CreateApproval(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CreateApproval returned %+v, want %+v", got, want)
	}
	if got == want {
		t.Fatal("CreateApproval returned the caller's pointer; callers must not share it")
	}
	s = reopen(t, s)
	for name, get := range map[string]func() (*gate.Approval, error){
		"GetApproval":  func() (*gate.Approval, error) { return s.GetApproval(ctx, "a1") },
		"FindApproval": func() (*gate.Approval, error) { return s.FindApproval(ctx, "claude", "toolu_1") },
	} {
		a, err := get()
		if err != nil {
			t.Fatalf("%s after reopen: %v", name, err)
		}
		if !reflect.DeepEqual(a, want) {
			t.Errorf("%s after reopen = %+v, want %+v", name, a, want)
		}
	}
}

func TestCreateApprovalValidation(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	if _, err := s.CreateApproval(ctx, newApproval("dup", "a", "k1")); err != nil {
		t.Fatal(err)
	}
	statusless := newApproval("nostatus", "a", "k3")
	statusless.Status = ""
	tests := []struct {
		name   string
		a      *gate.Approval
		wantIs error
	}{
		{"nil", nil, gate.ErrInvalid},
		{"no id", newApproval("", "a", "k2"), gate.ErrInvalid},
		{"bad status", func() *gate.Approval { a := newApproval("x", "a", "k2"); a.Status = "maybe"; return a }(), gate.ErrInvalid},
		{"id reused with another key", newApproval("dup", "a", "other"), gate.ErrInvalid},
		{"empty status means pending", statusless, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.CreateApproval(ctx, tt.a)
			if !errors.Is(err, tt.wantIs) || (tt.wantIs == nil) != (err == nil) {
				t.Fatalf("CreateApproval: %v, want %v", err, tt.wantIs)
			}
			if tt.wantIs == nil && got.Status != gate.StatusPending {
				t.Errorf("status = %q, want pending", got.Status)
			}
		})
	}
	if _, err := s.FindApproval(ctx, "a", "other"); !errors.Is(err, gate.ErrNotFound) {
		t.Errorf("a refused create moved the index: FindApproval = %v", err)
	}
}

func TestIdempotencyUnderConcurrency(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	const n = 16
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created []string
		exists  []*gate.Approval
		other   []error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := s.CreateApproval(ctx, newApproval(fmt.Sprintf("a%02d", i), "claude", "toolu_same"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created = append(created, a.ID)
			case errors.Is(err, gate.ErrExists):
				exists = append(exists, a)
			default:
				other = append(other, err)
			}
		}()
	}
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("unexpected errors: %v", other)
	}
	if len(created) != 1 || len(exists) != n-1 {
		t.Fatalf("created %d, ErrExists %d; want 1 and %d", len(created), len(exists), n-1)
	}
	for _, a := range exists {
		if a == nil || a.ID != created[0] {
			t.Fatalf("ErrExists returned %+v, want the approval %s", a, created[0])
		}
	}
	all, err := s.ListApprovals(ctx, "")
	if err != nil || len(all) != 1 {
		t.Fatalf("ListApprovals = %v, %v; want exactly one", ids(all), err)
	}
	// Another agent's identical key is a different call.
	if _, err := s.CreateApproval(ctx, newApproval("b1", "codex", "toolu_same")); err != nil {
		t.Fatalf("other agent, same key: %v", err)
	}

	// Once final, the explicit key still names the first approval: the same
	// call attaches to it.
	if _, err := s.UpdateApproval(ctx, created[0], decide(gate.StatusDenied, "ana")); err != nil {
		t.Fatal(err)
	}
	if a, err := s.CreateApproval(ctx, newApproval("again", "claude", "toolu_same")); !errors.Is(err, gate.ErrExists) || a.ID != created[0] {
		t.Fatalf("CreateApproval after the first became final = %v, %v; want ErrExists with %s", a, err, created[0])
	}
	s = reopen(t, s)
	found, err := s.FindApproval(ctx, "claude", "toolu_same")
	if err != nil || found.ID != created[0] || found.Status != gate.StatusDenied {
		t.Fatalf("FindApproval = %+v, %v; want %s, denied", found, err, created[0])
	}
}

// TestCreateApprovalBinding checks that CreateApproval applies gate.Reuse
// inside its transaction: what happens to a second call under a key.
func TestCreateApprovalBinding(t *testing.T) {
	const derived = "derived:0123"
	other := func(a *gate.Approval) { a.Digest, a.Input = "digest-of-other", []byte(`{"command":"dropdb prod"}`) }
	tests := []struct {
		name   string
		key    string
		decide bool          // decide the first before the second arrives
		arrive time.Duration // the second's CreatedAt, after t0 (the first is decided at t0+1m)
		change func(*gate.Approval)
		wantIs error // nil: a new approval is stored and the index moves; else the error comes with the first
	}{
		{"explicit, pending, same call", "toolu_x", false, 0, nil, gate.ErrExists},
		{"explicit, decided, same call", "toolu_x", true, 2 * time.Minute, nil, gate.ErrExists},
		{"explicit, other input", "toolu_x", false, 0, other, gate.ErrConflict},
		{"explicit, decided, other input", "toolu_x", true, 0, other, gate.ErrConflict},
		{"explicit, other session", "toolu_x", false, 0, func(a *gate.Approval) { a.SessionID = "sess-2" }, gate.ErrConflict},
		{"explicit, other cwd", "toolu_x", false, 0, func(a *gate.Approval) { a.Cwd = "/elsewhere" }, gate.ErrConflict},
		{"explicit, other tool", "toolu_x", false, 0, func(a *gate.Approval) { a.Tool = "Write" }, gate.ErrConflict},
		{"derived, pending", derived, false, 0, nil, gate.ErrExists},
		{"derived, decided before the second arrived", derived, true, 2 * time.Minute, nil, nil},
		{"derived, decided after the second arrived", derived, true, 30 * time.Second, nil, gate.ErrExists},
		{"derived, decided as the second arrived", derived, true, time.Minute, nil, gate.ErrExists},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t)
			ctx := context.Background()
			if _, err := s.CreateApproval(ctx, newApproval("first", "claude", tt.key)); err != nil {
				t.Fatal(err)
			}
			if tt.decide {
				if _, err := s.UpdateApproval(ctx, "first", decide(gate.StatusApproved, "ana")); err != nil {
					t.Fatal(err)
				}
			}
			second := newApproval("second", "claude", tt.key)
			second.CreatedAt = t0.Add(tt.arrive)
			if tt.change != nil {
				tt.change(second)
			}
			got, err := s.CreateApproval(ctx, second)
			if tt.wantIs == nil {
				if err != nil || got.ID != "second" {
					t.Fatalf("CreateApproval = %v, %v; want the second stored", got, err)
				}
			} else if !errors.Is(err, tt.wantIs) || got == nil || got.ID != "first" {
				t.Fatalf("CreateApproval = %v, %v; want %v with the first", got, err, tt.wantIs)
			}
			want := "first"
			if tt.wantIs == nil {
				want = "second"
			}
			if found, err := s.FindApproval(ctx, "claude", tt.key); err != nil || found.ID != want {
				t.Errorf("the key names %v (%v), want %s", found, err, want)
			}
			if all, _ := s.ListApprovals(ctx, ""); len(all) != 1+boolInt(tt.wantIs == nil) {
				t.Errorf("stored %v", ids(all))
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestUpdateApproval(t *testing.T) {
	errVeto := errors.New("veto")
	tests := []struct {
		name        string
		fn          func(*gate.Approval) error
		wantIs      error
		wantStatus  gate.Status
		wantPending []string
	}{
		{"decide", decide(gate.StatusApproved, "ana"), nil, gate.StatusApproved, []string{"a2"}},
		{"fn error writes nothing", func(a *gate.Approval) error { a.Status = gate.StatusDenied; a.Reason = "x"; return errVeto }, errVeto, gate.StatusPending, []string{"a1", "a2"}},
		{"message refs stay pending", func(a *gate.Approval) error {
			a.Messages = append(a.Messages, gate.MessageRef{Frontend: "slack", ChatID: "C1", MessageID: "1.2"})
			return nil
		}, nil, gate.StatusPending, []string{"a1", "a2"}},
		{"id change refused", func(a *gate.Approval) error { a.ID = "zz"; return nil }, gate.ErrInvalid, gate.StatusPending, []string{"a1", "a2"}},
		{"key change refused", func(a *gate.Approval) error { a.IdempotencyKey = "zz"; a.Status = gate.StatusExpired; return nil }, gate.ErrInvalid, gate.StatusPending, []string{"a1", "a2"}},
		{"bad status refused", func(a *gate.Approval) error { a.Status = "bogus"; return nil }, gate.ErrInvalid, gate.StatusPending, []string{"a1", "a2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t)
			ctx := context.Background()
			for _, id := range []string{"a1", "a2"} {
				if _, err := s.CreateApproval(ctx, newApproval(id, "claude", "k-"+id)); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := s.GetApproval(ctx, "a1")
			got, err := s.UpdateApproval(ctx, "a1", tt.fn)
			if !errors.Is(err, tt.wantIs) || (tt.wantIs == nil) != (err == nil) {
				t.Fatalf("UpdateApproval: %v, want %v", err, tt.wantIs)
			}
			s = reopen(t, s)
			stored, err := s.GetApproval(ctx, "a1")
			if err != nil {
				t.Fatal(err)
			}
			if stored.Status != tt.wantStatus {
				t.Errorf("stored status = %q, want %q", stored.Status, tt.wantStatus)
			}
			if tt.wantIs != nil && !reflect.DeepEqual(stored, before) {
				t.Errorf("failed update changed the approval: %+v, was %+v", stored, before)
			}
			if tt.wantIs == nil && !reflect.DeepEqual(stored, got) {
				t.Errorf("UpdateApproval returned %+v, stored %+v", got, stored)
			}
			pending, err := s.ListApprovals(ctx, gate.StatusPending)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ids(pending), tt.wantPending) {
				t.Errorf("pending = %v, want %v", ids(pending), tt.wantPending)
			}
		})
	}
}

func TestUpdateApprovalUnknownID(t *testing.T) {
	s, _ := openTest(t)
	for _, id := range []string{"nope", ""} {
		_, err := s.UpdateApproval(context.Background(), id, func(*gate.Approval) error {
			t.Error("fn called for an unknown id")
			return nil
		})
		if !errors.Is(err, gate.ErrNotFound) {
			t.Errorf("UpdateApproval(%q): %v, want ErrNotFound", id, err)
		}
		if _, err := s.GetApproval(context.Background(), id); !errors.Is(err, gate.ErrNotFound) {
			t.Errorf("GetApproval(%q): %v, want ErrNotFound", id, err)
		}
	}
	if _, err := s.FindApproval(context.Background(), "claude", "nope"); !errors.Is(err, gate.ErrNotFound) {
		t.Errorf("FindApproval: %v, want ErrNotFound", err)
	}
}

// Concurrent decisions on one approval: exactly one wins, the others see it
// already decided (the race detector checks the rest).
func TestConcurrentUpdatesSerialise(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	if _, err := s.CreateApproval(ctx, newApproval("a1", "claude", "k")); err != nil {
		t.Fatal(err)
	}
	const n = 12
	var wg sync.WaitGroup
	results := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status := gate.StatusApproved
			if i%2 == 1 {
				status = gate.StatusDenied
			}
			_, err := s.UpdateApproval(ctx, "a1", decide(status, fmt.Sprintf("p%d", i)))
			results <- err
		}()
	}
	// Counters incremented under concurrency must not lose updates.
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.UpdateApproval(ctx, "a1", func(a *gate.Approval) error {
				a.Messages = append(a.Messages, gate.MessageRef{Frontend: "slack", ChatID: "C1", MessageID: fmt.Sprint(len(a.Messages))})
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(results)
	wins := 0
	for err := range results {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, gate.ErrAlreadyDecided):
			t.Errorf("unexpected error %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d decisions won, want exactly 1", wins)
	}
	a, err := s.GetApproval(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Messages) != n {
		t.Errorf("%d message refs, want %d (lost updates)", len(a.Messages), n)
	}
	if pending, _ := s.ListApprovals(ctx, gate.StatusPending); len(pending) != 0 {
		t.Errorf("decided approval still in the pending index: %v", ids(pending))
	}
}

func TestListApprovalsOrderAndFilter(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	// ids in reverse alphabetical order, so id order is not creation order.
	created := []string{"z9", "m5", "x1", "b2", "q7"}
	for i, id := range created {
		a := newApproval(id, "claude", "k-"+id)
		a.CreatedAt = t0.Add(time.Duration(i) * time.Second)
		if _, err := s.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.UpdateApproval(ctx, "m5", decide(gate.StatusApproved, "ana")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateApproval(ctx, "b2", decide(gate.StatusDenied, "bo")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateApproval(ctx, "q7", func(a *gate.Approval) error { a.Status = gate.StatusExpired; return nil }); err != nil {
		t.Fatal(err)
	}
	// An answer the rules gave at once can be stored final from the start.
	allowed := newApproval("a0", "claude", "")
	allowed.Status = gate.StatusAllowed
	if _, err := s.CreateApproval(ctx, allowed); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	tests := []struct {
		status gate.Status
		want   []string
	}{
		{"", []string{"z9", "m5", "x1", "b2", "q7", "a0"}},
		{gate.StatusPending, []string{"z9", "x1"}},
		{gate.StatusApproved, []string{"m5"}},
		{gate.StatusDenied, []string{"b2"}},
		{gate.StatusExpired, []string{"q7"}},
		{gate.StatusAllowed, []string{"a0"}},
		{gate.StatusCancelled, []string{}},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			got, err := s.ListApprovals(ctx, tt.status)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ids(got), tt.want) {
				t.Errorf("ListApprovals(%q) = %v, want %v", tt.status, ids(got), tt.want)
			}
		})
	}
	if _, err := s.ListApprovals(ctx, "bogus"); !errors.Is(err, gate.ErrInvalid) {
		t.Errorf("ListApprovals(bogus): %v, want ErrInvalid", err)
	}
}

package gate_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"approvalbot/gate"
	"approvalbot/store"
)

// TestIdempotencyBinding: a key is bound to its call; what a second submit
// under the key gets (lifecycle point 7).
func TestIdempotencyBinding(t *testing.T) {
	type step struct {
		call   gate.Call
		decide bool // approve what this step got
	}
	first := call("AskTool", `{"cmd":"terraform apply"}`)
	first.IdempotencyKey = "call-0001"
	other := call("AskTool", `{"cmd":"dropdb production"}`)
	other.IdempotencyKey = "call-0001"
	otherSession := first
	otherSession.SessionID = "s2"
	derived := call("AskTool", `{"cmd":"make"}`)

	tests := []struct {
		name     string
		decided  bool      // approve the first before the second
		second   gate.Call // submitted after the first
		wantErr  error     // nil: no error
		wantSame bool      // the second got the first's approval
	}{
		{"explicit, same call, pending", false, first, nil, true},
		{"explicit, same call, decided", true, first, nil, true},
		{"explicit, other input, pending", false, other, gate.ErrConflict, false},
		{"explicit, other input, decided", true, other, gate.ErrConflict, false},
		{"explicit, other session", true, otherSession, gate.ErrConflict, false},
		{"derived, pending", false, derived, nil, true},
		{"derived, decided: approve once is once", true, derived, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var clock atomic.Pointer[time.Time]
			start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			clock.Store(&start)
			h := newHarness(t, gate.Config{Now: func() time.Time { return *clock.Load() }})
			ctx := context.Background()
			c1 := first
			if tt.second.IdempotencyKey == "" {
				c1 = derived
			}
			a := h.submit(c1)
			if tt.decided {
				if _, err := h.g.Decide(ctx, a.ID, gate.Decision{Approve: true, By: "ana"}); err != nil {
					t.Fatal(err)
				}
				later := start.Add(time.Second)
				clock.Store(&later)
			}
			b, err := h.g.Submit(ctx, tt.second)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("second submit: %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if b != nil {
					t.Errorf("a conflict returned an approval: %+v", b)
				}
				if a, _ := h.g.Get(ctx, a.ID); a.Digest == "" || (tt.decided != a.Status.Final()) {
					t.Errorf("the first approval changed: %+v", a)
				}
				entries, _ := h.g.Audit(ctx, 0, 0)
				if last := entries[len(entries)-1]; last.Event != "idempotency_conflict" || last.ApprovalID != a.ID {
					t.Errorf("conflict not audited: last entry %+v", last)
				}
				return
			}
			if same := b.ID == a.ID; same != tt.wantSame {
				t.Errorf("second got %s (%s), first %s: same = %v, want %v", b.ID, b.Status, a.ID, same, tt.wantSame)
			}
			if !tt.wantSame && b.Status != gate.StatusPending {
				t.Errorf("a new call after the decision is %s, want pending (asked again)", b.Status)
			}
		})
	}
}

// TestSubmitRefusesReservedKey: clients cannot pose as a derived key.
func TestSubmitRefusesReservedKey(t *testing.T) {
	h := newHarness(t, gate.Config{})
	c := call("AskTool", `{}`)
	c.IdempotencyKey = "derived:abc"
	if _, err := h.g.Submit(context.Background(), c); !errors.Is(err, gate.ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
}

// stragglerStore holds a submit's idempotency lookup until the approval it
// missed has been decided: the interleaving in which the lookup and the
// create were separate steps made a second approval.
type stragglerStore struct {
	*store.Store
	hold func(ctx context.Context, agent, key string)
}

func (s stragglerStore) FindApproval(ctx context.Context, agent, key string) (*gate.Approval, error) {
	a, err := s.Store.FindApproval(ctx, agent, key)
	if errors.Is(err, gate.ErrNotFound) {
		s.hold(ctx, agent, key)
	}
	return a, err
}

// TestIdempotencyRace submits one key 8 times at once while an approver
// decides each approval the moment it is announced. Seven of the eight
// submits miss the approval in their lookup and go on only once the
// approver has decided it, so they reach CreateApproval with a decided
// approval under their key. Every submit of a key must still get the same
// approval, and the store hold exactly one per key. With a derived key the
// clock stands still, so every submit arrived before the decision and must
// attach as well. Run with -race.
func TestIdempotencyRace(t *testing.T) {
	const keys, submits = 40, 8
	frozen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, explicit := range []bool{true, false} {
		t.Run(fmt.Sprintf("explicit=%v", explicit), func(t *testing.T) {
			cfg := gate.Config{}
			if !explicit {
				cfg.Now = func() time.Time { return frozen }
			}
			st, err := store.Open(filepath.Join(t.TempDir(), "approvalbot.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var mu sync.Mutex
			decided := map[string]chan struct{}{} // by idempotency key
			decidedCh := func(key string) chan struct{} {
				mu.Lock()
				defer mu.Unlock()
				if decided[key] == nil {
					decided[key] = make(chan struct{})
				}
				return decided[key]
			}
			type stragglerKey struct{}
			hold := func(ctx context.Context, _, key string) {
				if ctx.Value(stragglerKey{}) != nil {
					<-decidedCh(key)
				}
			}
			g := gate.New(cfg, testPolicy(t), stragglerStore{st, hold}, nil)
			if err := g.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			events := g.Subscribe(ctx)
			approverDone := make(chan struct{})
			go func() { // the approver: decides whatever it sees, at once
				defer close(approverDone)
				for e := range events {
					if e.Type != gate.EventApprovalRequired {
						continue
					}
					_, err := g.Decide(ctx, e.Approval.ID, gate.Decision{Approve: true, By: "ana"})
					if err != nil && !errors.Is(err, gate.ErrAlreadyDecided) {
						t.Error(err)
					}
					if ch := decidedCh(e.Approval.IdempotencyKey); !isClosed(ch) {
						close(ch) // only this goroutine closes
					}
				}
			}()
			for k := range keys {
				c := call("AskTool", fmt.Sprintf(`{"k":%d}`, k))
				if explicit {
					c.IdempotencyKey = fmt.Sprintf("toolu_%d", k)
				}
				got := make([]string, submits)
				var wg sync.WaitGroup
				for i := range submits {
					sctx := ctx
					if i > 0 {
						sctx = context.WithValue(ctx, stragglerKey{}, true)
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						a, err := g.Submit(sctx, c)
						if err != nil {
							t.Error(err)
							return
						}
						got[i] = a.ID
					}()
				}
				wg.Wait()
				for i := range got {
					if got[i] != got[0] {
						t.Fatalf("key %d: two approvals: %v", k, got)
					}
				}
			}
			all, err := g.List(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != keys {
				t.Errorf("stored %d approvals for %d keys", len(all), keys)
			}
			for _, a := range all {
				if a.Status != gate.StatusApproved {
					t.Errorf("approval %s is %s, want approved", a.ID, a.Status)
				}
			}
			cancel()
			<-approverDone
		})
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

//go:build e2e

package e2efaults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/gate"
)

// Sizes of the fault-injection run: about a minute on two CPUs.
const (
	apiKeys       = 120 // calls made through the Go client
	apiPosters    = 3   // concurrent clients re-posting each key
	hookKeys      = 24  // calls made through real hook processes
	hookPosters   = 2   // hook processes per tool_use_id
	allowedCalls  = 200 // calls the rules allow at once, for their audit entries
	minKills      = 20
	maxKills      = 24
	killMin       = 300 * time.Millisecond
	killMax       = 2 * time.Second
	runTimeout    = 150 * time.Second
	submitSpacing = 150 * time.Millisecond // between the first posts of two keys
	maxDecideWait = 4 * time.Second        // approvers leave an approval pending up to this long
)

// decideAfter is how long the approvers leave approval id pending: 0 to
// maxDecideWait, fixed per approval, so waits span kills.
func decideAfter(id string) time.Duration {
	var h uint32
	for _, c := range id {
		h = h*31 + uint32(c)
	}
	return time.Duration(h%uint32(maxDecideWait/time.Millisecond)) * time.Millisecond
}

type clientAnswer struct {
	key string
	a   *gate.Approval
	err error
}

// TestFaultInjection SIGKILLs a real serve at random moments (at least 20
// times) while clients and hooks re-post the same keys and two approvers
// race, then checks: exactly one approval per key, every client got the
// stored decision, no hook answered "unreachable", every stored state and
// every at-once answer has its audit entry, and the chain verifies.
func TestFaultInjection(t *testing.T) {
	d := newDaemon(t)
	d.start()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 14))
	t.Logf("seed-free run: kills every %s-%s", killMin, killMax)

	var wg sync.WaitGroup
	answers := make(chan clientAnswer, apiKeys*apiPosters+allowedCalls)
	hooks := make(chan hookResult, hookKeys*hookPosters)
	agent := api.NewClient(d.url(), "", api.WithPollWait(5*time.Second))
	call := func(key, command string) gate.Call {
		input, _ := json.Marshal(map[string]string{"command": command})
		return gate.Call{Agent: "fault-agent", SessionID: "s-" + key, Tool: "Bash", Input: input, Cwd: "/tmp", IdempotencyKey: key}
	}
	for i := range apiKeys {
		key := fmt.Sprintf("call-%03d", i)
		for range apiPosters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if !sleepUntil(ctx, time.Now().Add(time.Duration(i)*submitSpacing)) {
					return
				}
				a, err := agent.SubmitAndWait(ctx, call(key, "make deploy "+key), 3*time.Second)
				answers <- clientAnswer{key, a, err}
			}()
		}
	}
	for i := range allowedCalls {
		key := fmt.Sprintf("allow-%03d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !sleepUntil(ctx, time.Now().Add(time.Duration(i)*apiKeys*submitSpacing/allowedCalls)) {
				return
			}
			a, err := agent.SubmitAndWait(ctx, call(key, "echo ok "+key), 3*time.Second)
			answers <- clientAnswer{key, a, err}
		}()
	}
	for i := range hookKeys {
		key := fmt.Sprintf("toolu_fault_%02d", i)
		for range hookPosters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if !sleepUntil(ctx, time.Now().Add(time.Duration(i)*apiKeys*submitSpacing/hookKeys)) {
					return
				}
				hooks <- runHook(ctx, d, key, "make release "+key) // the default connect grace, 3s
			}()
		}
	}

	// Two approvers race: each decides every pending approval it sees, one
	// approving, one denying, in random order.
	clientsDone := make(chan struct{})
	var approvers sync.WaitGroup
	var decisions, lostRaces atomic.Int64
	for i, approve := range []bool{true, false} {
		approvers.Add(1)
		go func() {
			defer approvers.Done()
			c := d.approver()
			r := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			for {
				select {
				case <-clientsDone:
					return
				case <-time.After(time.Duration(20+r.IntN(80)) * time.Millisecond):
				}
				pending, err := c.List(ctx, gate.StatusPending)
				if err != nil {
					continue // the daemon is down: try again
				}
				r.Shuffle(len(pending), func(a, b int) { pending[a], pending[b] = pending[b], pending[a] })
				for _, a := range pending {
					if time.Since(a.CreatedAt) < decideAfter(a.ID) {
						continue // let the waiting clients and hooks live through kills
					}
					var err error
					if approve {
						_, err = c.Approve(ctx, a.ID, false, "", fmt.Sprintf("approver-%d", i))
					} else {
						_, err = c.Deny(ctx, a.ID, "no", false, fmt.Sprintf("approver-%d", i))
					}
					switch {
					case err == nil:
						decisions.Add(1)
					case errors.Is(err, gate.ErrAlreadyDecided):
						lostRaces.Add(1)
					}
				}
			}
		}()
	}

	// The killer: SIGKILL and restart at random moments while clients run.
	kills := 0
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		for kills < maxKills {
			wait := killMin + time.Duration(rng.Int64N(int64(killMax-killMin)))
			select {
			case <-clientsDone:
				if kills >= minKills {
					return
				}
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			d.stop(syscall.SIGKILL)
			kills++
			d.start()
		}
	}()
	wg.Wait()
	close(clientsDone)
	<-killerDone
	approvers.Wait()
	close(answers)
	close(hooks)
	if ctx.Err() != nil {
		t.Fatalf("the run did not finish in %s", runTimeout)
	}
	if kills < minKills {
		t.Errorf("only %d SIGKILLs, want at least %d", kills, minKills)
	}

	// One more kill and restart: what follows is read from the file.
	d.stop(syscall.SIGKILL)
	d.start()
	admin := d.approver()
	all, err := admin.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string][]*gate.Approval{}
	byID := map[string]*gate.Approval{}
	for _, a := range all {
		byKey[a.IdempotencyKey] = append(byKey[a.IdempotencyKey], a)
		byID[a.ID] = a
	}
	twice := 0
	for key, as := range byKey {
		if len(as) != 1 {
			twice++
			t.Errorf("key %s has %d approvals", key, len(as))
		}
	}
	var mismatches, clientErrs, allowedAnswers int
	atOnce := map[string]gate.Status{} // id -> status answered at once
	for ans := range answers {
		switch {
		case ans.err != nil:
			clientErrs++
			t.Errorf("client for %s: %v", ans.key, ans.err)
		case ans.a.Status == gate.StatusAllowed:
			allowedAnswers++
			atOnce[ans.a.ID] = ans.a.Status
		default:
			st := byKey[ans.key]
			if len(st) != 1 || st[0].ID != ans.a.ID || st[0].Status != ans.a.Status || st[0].Decision != ans.a.Decision {
				mismatches++
				t.Errorf("client for %s got %s %s, store has %+v", ans.key, ans.a.ID, ans.a.Status, st)
			}
		}
	}
	var unreachable, hookMismatch int
	for r := range hooks {
		st := byKey[r.key]
		want := ""
		if len(st) == 1 {
			want = string(st[0].Decision)
		}
		if r.unreachable() {
			unreachable++
		}
		if r.decision != want || r.unreachable() {
			hookMismatch++
			t.Errorf("hook %s answered %q (%s), store says %q\nstderr: %s", r.key, r.decision, r.reason, want, tail(r.stderr, 400))
		}
	}
	for key := range byKey {
		if byKey[key][0].Status == gate.StatusPending {
			t.Errorf("key %s still pending after every client got its answer", key)
		}
	}

	// Every stored state change and every at-once answer is in the chain.
	var entries []gate.AuditEntry
	for after := uint64(0); ; {
		page, err := admin.Audit(ctx, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		entries = append(entries, page...)
		after = page[len(page)-1].Seq
	}
	audited := map[string]map[string]gate.Status{}
	for _, e := range entries {
		if audited[e.ApprovalID] == nil {
			audited[e.ApprovalID] = map[string]gate.Status{}
		}
		audited[e.ApprovalID][e.Event] = e.Status
	}
	missing := 0
	for id, a := range byID {
		if _, ok := audited[id]["pending"]; !ok {
			missing++
			t.Errorf("approval %s (%s) has no pending audit entry", id, a.IdempotencyKey)
		}
		if a.Status.Final() {
			if got, ok := audited[id]["decided"]; !ok || got != a.Status {
				missing++
				t.Errorf("approval %s is %s but its decided audit entry is %q (present %v)", id, a.Status, got, ok)
			}
		}
	}
	for id := range atOnce {
		if _, ok := audited[id]["evaluated"]; !ok {
			missing++
			t.Errorf("at-once answer %s has no audit entry", id)
		}
	}
	n, err := admin.VerifyAudit(ctx)
	if err != nil {
		t.Errorf("audit chain: %v", err)
	}
	cli := exec.CommandContext(ctx, binPath, "audit", "--verify")
	cli.Env = append(d.env, "APPROVALBOT_URL="+d.url())
	if out, err := cli.CombinedOutput(); err != nil {
		t.Errorf("approvalbot audit --verify: %v\n%s", err, out)
	} else if !strings.Contains(strings.ToLower(string(out)), "ok") {
		t.Errorf("approvalbot audit --verify said: %s", out)
	}
	t.Logf("%d SIGKILLs; %d keys (%d approvals, %d keys with more than one); %d allowed at once; %d decisions, %d lost races; "+
		"%d client errors, %d client/store mismatches; %d hooks unreachable, %d hook/store mismatches; %d audit entries (chain %d), %d missing",
		kills, len(byKey), len(all), twice, allowedAnswers, decisions.Load(), lostRaces.Load(),
		clientErrs, mismatches, unreachable, hookMismatch, len(entries), n, missing)
}

// Package gatetest builds the real gate on an in-memory store for tests of
// the packages around it (frontends, the API, the CLI), so those tests see
// the gate's actual behaviour (digests, first decision wins, cascades,
// message references, the prompt lifecycle) instead of a copy of it.
package gatetest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"approvalbot/config"
	"approvalbot/gate"
	"approvalbot/store/memstore"
)

// Rules are the rules a test gate uses unless Options.Rules says otherwise:
// the file is named rules.jsonc, so "asked by" reads `rules.jsonc:N ...`.
const Rules = `{
  "*": "ask",
  "Bash": { "*": "ask", "ls *": "allow", "git status": "allow", "rm -rf /": "deny" },
  "Read": { "*": "allow", "*.env": "deny" },
  "Write": { "*": "ask" },
  "OkTool": "allow",
  "BadTool": "deny"
}`

// Options adjust a test gate.
type Options struct {
	// Config is the gate's lifecycle settings; Now defaults to the Env's clock.
	Config gate.Config
	// Rules replaces Rules (a JSONC rules file's text).
	Rules string
	// Notifiers are registered before Start.
	Notifiers []gate.Notifier
	// Store, if set, is used instead of a new in-memory store (a restart
	// test passes the store of the gate it replaces).
	Store gate.Store
	// NoStart leaves the gate unstarted (the test calls Start).
	NoStart bool
}

// Env is a running test gate.
type Env struct {
	G     *gate.Gate
	Store gate.Store
	Clock *Clock
}

// New starts a real gate on an in-memory store; it is closed when the
// test ends.
func New(t testing.TB, o Options) *Env {
	t.Helper()
	clock := &Clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if o.Config.Now == nil {
		o.Config.Now = clock.Now
	}
	rules := o.Rules
	if rules == "" {
		rules = Rules
	}
	spec, err := config.ParseRules("rules.jsonc", []byte(rules), "/home/test")
	if err != nil {
		t.Fatalf("gatetest: parse rules: %v", err)
	}
	spec.Home = "/home/test"
	p, err := gate.Compile(spec)
	if err != nil {
		t.Fatalf("gatetest: compile rules: %v", err)
	}
	st := o.Store
	if st == nil {
		st = memstore.New()
	}
	g := gate.New(o.Config, p, st, nil)
	for _, n := range o.Notifiers {
		g.AddNotifier(n)
	}
	if !o.NoStart {
		if err := g.Start(context.Background()); err != nil {
			t.Fatalf("gatetest: start: %v", err)
		}
	}
	t.Cleanup(func() { g.Close() })
	return &Env{G: g, Store: st, Clock: clock}
}

// Call is a call of tool with input (JSON) from agent "claude", session
// "s1", in /p.
func Call(tool, input string) gate.Call {
	return gate.Call{Agent: "claude", SessionID: "s1", Tool: tool, Input: json.RawMessage(input), Cwd: "/p"}
}

// Bash is a Bash call of command.
func Bash(command string) gate.Call {
	in, _ := json.Marshal(map[string]string{"command": command})
	return Call("Bash", string(in))
}

// Ask submits c, which must become a pending approval, and returns it.
func (e *Env) Ask(t testing.TB, c gate.Call) *gate.Approval {
	t.Helper()
	a, err := e.G.Submit(context.Background(), c)
	if err != nil {
		t.Fatalf("gatetest: submit %s: %v", c.Tool, err)
	}
	if a.Status != gate.StatusPending {
		t.Fatalf("gatetest: submit %s: status %s, want pending", c.Tool, a.Status)
	}
	return a
}

// Get returns the approval with id as the store has it now.
func (e *Env) Get(t testing.TB, id string) *gate.Approval {
	t.Helper()
	a, err := e.G.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("gatetest: get %s: %v", id, err)
	}
	return a
}

// Clock is a settable clock for the gate's Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Eventually polls cond until it holds, failing the test after a deadline
// (a bound on a hang, not a timing assertion).
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Shown waits until the gate has recorded a message of frontend for the
// approval with id, and returns the approval with it.
func (e *Env) Shown(t testing.TB, id, frontend string) *gate.Approval {
	t.Helper()
	var a *gate.Approval
	Eventually(t, "the "+frontend+" prompt of "+id, func() bool {
		got, err := e.G.Get(context.Background(), id)
		if err != nil {
			return false
		}
		for _, m := range got.Messages {
			if m.Frontend == frontend {
				a = got
				return true
			}
		}
		return false
	})
	return a
}

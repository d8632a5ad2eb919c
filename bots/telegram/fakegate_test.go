package telegram

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"time"

	"approvalbot/gate"
)

// fakeGate is an in-memory Gate with the real one's decision rules: first
// decision wins, a digest prefix must match, refs replace per chat.
type fakeGate struct {
	mu        sync.Mutex
	approvals map[string]*gate.Approval
	order     []string
	rules     []gate.AlwaysRule
	modes     map[string]gate.Mode
	values    map[string]string
	decisions []gate.Decision
	now       time.Time
}

func newFakeGate() *fakeGate {
	return &fakeGate{approvals: map[string]*gate.Approval{}, modes: map[string]gate.Mode{}, values: map[string]string{},
		now: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}
}

func clone(a *gate.Approval) *gate.Approval {
	c := *a
	c.Messages = append([]gate.MessageRef(nil), a.Messages...)
	return &c
}

// add stores a pending approval for a shell command.
func (f *fakeGate) add(id, command string) *gate.Approval {
	a := &gate.Approval{
		ID: id, Status: gate.StatusPending, Agent: "claude", SessionID: "sess-1", Tool: "Bash", Cwd: "/home/ana/proj",
		Input:  []byte(fmt.Sprintf(`{"command":%q}`, command)),
		Judged: &gate.Judged{Kind: gate.KindShell, Command: command},
		Digest: fmt.Sprintf("%x", sha256.Sum256([]byte(id+"\x00"+command))),
		Evaluation: gate.Evaluation{Decision: gate.Ask, Kind: gate.KindShell, Reason: "no rule matched",
			Rule:        &gate.RuleRef{Layer: gate.LayerStatic, Tool: "Bash", Pattern: "*", Action: gate.Ask},
			Always:      []string{"git push *"},
			AlwaysRules: []gate.AlwaysPattern{{Tool: "Bash", Pattern: "git push *"}}},
		CreatedAt: f.now, Deadline: f.now.Add(10 * time.Minute),
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.approvals[id] = a
	f.order = append(f.order, id)
	return clone(a)
}

func (f *fakeGate) Get(_ context.Context, id string) (*gate.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok {
		return nil, gate.ErrNotFound
	}
	return clone(a), nil
}

func (f *fakeGate) List(_ context.Context, status gate.Status) ([]*gate.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*gate.Approval
	for _, id := range f.order {
		if a := f.approvals[id]; status == "" || a.Status == status {
			out = append(out, clone(a))
		}
	}
	return out, nil
}

func (f *fakeGate) Decide(_ context.Context, id string, d gate.Decision) (*gate.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok {
		return nil, gate.ErrNotFound
	}
	if a.Status.Final() {
		return clone(a), gate.ErrAlreadyDecided
	}
	if d.Digest != "" && !strings.HasPrefix(a.Digest, d.Digest) {
		return nil, gate.ErrDigestMismatch
	}
	f.decisions = append(f.decisions, d)
	at := f.now.Add(3 * time.Minute)
	a.DecidedAt, a.DecidedBy, a.Via, a.Reason = &at, d.By, d.Via, d.Reason
	switch {
	case d.Approve && d.Always:
		a.Status, a.Decision = gate.StatusApprovedAlways, gate.Allow
	case d.Approve:
		a.Status, a.Decision = gate.StatusApproved, gate.Allow
	case d.Stop:
		a.Status, a.Decision = gate.StatusDeniedStop, gate.Deny
	default:
		a.Status, a.Decision = gate.StatusDenied, gate.Deny
	}
	return clone(a), nil
}

func (f *fakeGate) decisionsCopy() []gate.Decision {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]gate.Decision(nil), f.decisions...)
}

func (f *fakeGate) AddMessageRef(_ context.Context, id string, ref gate.MessageRef) (*gate.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok {
		return nil, gate.ErrNotFound
	}
	kept := a.Messages[:0]
	for _, m := range a.Messages {
		if m.Frontend != ref.Frontend || m.ChatID != ref.ChatID {
			kept = append(kept, m)
		}
	}
	a.Messages = append(kept, ref)
	return clone(a), nil
}

func (f *fakeGate) Rules(_ context.Context, agent string) ([]gate.AlwaysRule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]gate.AlwaysRule(nil), f.rules...), nil
}

func (f *fakeGate) RemoveRule(_ context.Context, id, _ string) (gate.AlwaysRule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.rules {
		if r.ID == id {
			f.rules = append(f.rules[:i], f.rules[i+1:]...)
			return r, nil
		}
	}
	return gate.AlwaysRule{}, gate.ErrNotFound
}

func (f *fakeGate) SetMode(_ context.Context, agent string, m gate.Mode, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.modes[agent] = m
	return nil
}

func (f *fakeGate) Value(_ context.Context, key string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.values[key]
	if !ok {
		return "", gate.ErrNotFound
	}
	return v, nil
}

func (f *fakeGate) SetValue(_ context.Context, key, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if value == "" {
		delete(f.values, key)
	} else {
		f.values[key] = value
	}
	return nil
}

func (f *fakeGate) value(key string) string {
	v, _ := f.Value(context.Background(), key)
	return v
}

package slack

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"approvalbot/gate"
)

// fakeGate is an in-memory Gate: first decision wins, digest prefixes
// checked, every call recorded.
type fakeGate struct {
	mu        sync.Mutex
	approvals map[string]*gate.Approval
	decisions []gate.Decision
	rules     []gate.AlwaysRule
	modes     map[string]gate.Mode
}

func newFakeGate(as ...*gate.Approval) *fakeGate {
	f := &fakeGate{approvals: map[string]*gate.Approval{}, modes: map[string]gate.Mode{}}
	for _, a := range as {
		f.approvals[a.ID] = a
	}
	return f
}

func clone(a *gate.Approval) *gate.Approval {
	c := *a
	c.Messages = append([]gate.MessageRef(nil), a.Messages...)
	return &c
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
		return clone(a), gate.ErrDigestMismatch
	}
	f.decisions = append(f.decisions, d)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a.DecidedBy, a.Via, a.Reason, a.DecidedAt = d.By, d.Via, d.Reason, &now
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
	for _, a := range f.approvals {
		if a.Status == status {
			out = append(out, clone(a))
		}
	}
	return out, nil
}

func (f *fakeGate) AddMessageRef(_ context.Context, id string, ref gate.MessageRef) (*gate.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok {
		return nil, gate.ErrNotFound
	}
	for i, m := range a.Messages {
		if m.Frontend == ref.Frontend && m.ChatID == ref.ChatID {
			a.Messages[i] = ref
			return clone(a), nil
		}
	}
	a.Messages = append(a.Messages, ref)
	return clone(a), nil
}

func (f *fakeGate) Rules(_ context.Context, agent string) ([]gate.AlwaysRule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []gate.AlwaysRule
	for _, r := range f.rules {
		if agent == "" || r.Agent == agent {
			out = append(out, r)
		}
	}
	return out, nil
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
	return gate.AlwaysRule{}, fmt.Errorf("rule %s: %w", id, gate.ErrNotFound)
}

func (f *fakeGate) SetMode(_ context.Context, agent string, m gate.Mode, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.modes[agent] = m
	return nil
}

func (f *fakeGate) decided() []gate.Decision {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]gate.Decision(nil), f.decisions...)
}

func (f *fakeGate) mode(agent string) gate.Mode {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.modes[agent]
}

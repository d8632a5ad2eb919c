package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"approvalbot/gate"
)

func rule(id, agent, pattern string) gate.AlwaysRule {
	exp := t0.Add(time.Hour)
	return gate.AlwaysRule{
		ID: id, Agent: agent, Tool: "Bash", Pattern: pattern, Scope: gate.ScopeAgent,
		CreatedAt: t0, ExpiresAt: &exp, CreatedBy: "ana", ApprovalID: "ap-" + id,
	}
}

func TestRules(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	// "ab"+"c" vs "a"+"bc" style names must not leak into each other's lists.
	added := []gate.AlwaysRule{
		rule("r3", "claude", "git push *"),
		rule("r1", "codex", "npm test"),
		rule("r2", "claude", "cat *"),
		rule("r4", "claude2", "ls *"),
		rule("r5", "", "make"),
	}
	for _, r := range added {
		if err := s.AddRule(ctx, r); err != nil {
			t.Fatalf("AddRule(%s): %v", r.ID, err)
		}
	}
	if err := s.AddRule(ctx, rule("r1", "codex", "other")); !errors.Is(err, gate.ErrExists) {
		t.Errorf("AddRule with a used id: %v, want ErrExists", err)
	}
	if err := s.AddRule(ctx, rule("", "codex", "other")); !errors.Is(err, gate.ErrInvalid) {
		t.Errorf("AddRule without id: %v, want ErrInvalid", err)
	}
	s = reopen(t, s)

	list := func(agent string) []string {
		t.Helper()
		rs, err := s.ListRules(ctx, agent)
		if err != nil {
			t.Fatalf("ListRules(%q): %v", agent, err)
		}
		out := []string{}
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	tests := []struct {
		agent string
		want  []string
	}{
		{"", []string{"r3", "r1", "r2", "r4", "r5"}},
		{"claude", []string{"r3", "r2"}},
		{"claude2", []string{"r4"}},
		{"codex", []string{"r1"}},
		{"nobody", []string{}},
	}
	for _, tt := range tests {
		if got := list(tt.agent); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ListRules(%q) = %v, want %v", tt.agent, got, tt.want)
		}
	}
	rs, _ := s.ListRules(ctx, "codex")
	if !reflect.DeepEqual(rs[0], added[1]) {
		t.Errorf("stored rule = %+v, want %+v", rs[0], added[1])
	}

	got, err := s.DeleteRule(ctx, "r3")
	if err != nil || !reflect.DeepEqual(got, added[0]) {
		t.Fatalf("DeleteRule = %+v, %v; want %+v", got, err, added[0])
	}
	if _, err := s.DeleteRule(ctx, "r3"); !errors.Is(err, gate.ErrNotFound) {
		t.Errorf("second DeleteRule: %v, want ErrNotFound", err)
	}
	if _, err := s.DeleteRule(ctx, ""); !errors.Is(err, gate.ErrNotFound) {
		t.Errorf("DeleteRule(\"\"): %v, want ErrNotFound", err)
	}
	s = reopen(t, s)
	if got := list("claude"); !reflect.DeepEqual(got, []string{"r2"}) {
		t.Errorf("after delete, ListRules(claude) = %v", got)
	}
	if got := list(""); !reflect.DeepEqual(got, []string{"r1", "r2", "r4", "r5"}) {
		t.Errorf("after delete, ListRules() = %v", got)
	}
}

func TestModes(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	steps := []struct {
		agent   string
		set     gate.Mode
		wantErr error
		want    gate.Mode
	}{
		{"claude", gate.ModeStrict, nil, gate.ModeStrict},
		{"claude", gate.ModeApproveAll, nil, gate.ModeApproveAll},
		{"", gate.ModeInteractive, nil, gate.ModeInteractive},
		{"claude", "yolo", gate.ErrInvalid, gate.ModeApproveAll},
		{"codex", gate.ModeStrict, nil, gate.ModeStrict},
		{"codex", "", nil, ""},
	}
	for _, st := range steps {
		err := s.SetMode(ctx, st.agent, st.set)
		if !errors.Is(err, st.wantErr) || (st.wantErr == nil) != (err == nil) {
			t.Fatalf("SetMode(%q, %q): %v, want %v", st.agent, st.set, err, st.wantErr)
		}
		s = reopen(t, s)
		got, err := s.GetMode(ctx, st.agent)
		if err != nil || got != st.want {
			t.Fatalf("GetMode(%q) = %q, %v; want %q", st.agent, got, err, st.want)
		}
	}
	if got, err := s.GetMode(ctx, "never-set"); err != nil || got != "" {
		t.Errorf("GetMode(never-set) = %q, %v; want \"\"", got, err)
	}
}

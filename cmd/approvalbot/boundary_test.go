package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/config"
	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

// TestApproverTokenFile: the CLI's person-side commands read the approver
// token from the data dir when APPROVALBOT_TOKEN is unset; the agent side
// (hook) never does.
func TestApproverTokenFile(t *testing.T) {
	dataDir := t.TempDir()
	tok, created, err := config.EnsureApproverToken(dataDir)
	if err != nil || !created {
		t.Fatalf("EnsureApproverToken: %v %v", created, err)
	}
	g := gatetest.New(t, gatetest.Options{}).G
	srv := api.NewServer(api.Config{Open: true, AdminTokens: map[string]string{tok: config.LocalApprover}}, g, nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	vars := map[string]string{"APPROVALBOT_URL": ts.URL, "APPROVALBOT_DATA_DIR": dataDir, "USER": "ana"}
	runEnv := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
		code := dispatch(context.Background(), e, args)
		return code, out.String(), errb.String()
	}
	in, _ := json.Marshal(map[string]string{"command": "make deploy"})
	a, err := g.Submit(context.Background(), gate.Call{Agent: "claude", Tool: "Bash", Input: in})
	if err != nil || a.Status != gate.StatusPending {
		t.Fatalf("submit: %v %+v", err, a)
	}
	for _, args := range [][]string{{"pending"}, {"rules", "list"}, {"mode", "claude"}, {"audit"}} {
		if code, _, errs := runEnv("", args...); code != exitOK {
			t.Errorf("%v without APPROVALBOT_TOKEN: exit %d %s", args, code, errs)
		}
	}
	if code, _, errs := runEnv("", "approve", a.ID); code != exitOK {
		t.Fatalf("approve: %d %s", code, errs)
	}
	got, _ := g.Get(context.Background(), a.ID)
	if got.Status != gate.StatusApproved || !strings.HasPrefix(got.DecidedBy, config.LocalApprover) {
		t.Errorf("approved %s by %q, want by %s", got.Status, got.DecidedBy, config.LocalApprover)
	}

	// The hook is the agent's side: on a daemon that needs agent tokens it
	// is refused, so it did not borrow the approver token.
	audited, _ := g.Audit(context.Background(), 0, 0)
	closed := httptest.NewServer(api.NewServer(api.Config{AgentTokens: map[string]string{"agent-token-0123456789": "claude"},
		AdminTokens: map[string]string{tok: config.LocalApprover}}, g, nil))
	defer closed.Close()
	vars["APPROVALBOT_URL"] = closed.URL
	payload := `{"session_id":"s","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make"},"tool_use_id":"toolu_1"}`
	_, out, _ := runEnv(payload, "hook", "claude")
	if !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Errorf("hook with only the approver token on disk: %s", out)
	}
	if now, _ := g.Audit(context.Background(), 0, 0); len(now) != len(audited) {
		t.Errorf("the hook's call reached the gate: %+v", now[len(audited):])
	}
	if l, _ := g.List(context.Background(), ""); len(l) != 1 {
		t.Errorf("%d approvals, want only the first", len(l))
	}
}

// TestDecisionBoundaryServe runs the real `serve` with no tokens
// configured: it makes DATA_DIR/approver.token (0600) and keeps it across
// restarts; a client without it submits and waits freely but every
// decision, rules and mode route refuses it and changes nothing; and
// `approvalbot approve ID` with no APPROVALBOT_TOKEN, on the same machine,
// decides.
func TestDecisionBoundaryServe(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)
	env := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "APPROVALBOT_DATA_DIR=" + dataDir,
		"APPROVALBOT_RULES=" + askRules(t), "APPROVALBOT_URL=http://" + addr}
	d := startDaemonEnv(t, addr, env)

	tokPath := config.ApproverTokenPath(dataDir)
	fi, err := os.Stat(tokPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("approver token: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	tok, _ := os.ReadFile(tokPath)

	agent := api.NewClient(d.url, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	input, _ := json.Marshal(map[string]string{"command": "terraform apply"})
	a, err := agent.Submit(ctx, gate.Call{Agent: "claude", SessionID: "s1", Tool: "Bash", Input: input, Cwd: "/srv"}, 0)
	if err != nil || a.Status != gate.StatusPending {
		t.Fatalf("submit: %+v %v", a, err)
	}
	if got, err := agent.Get(ctx, a.ID, 0); err != nil || got.Status != gate.StatusPending {
		t.Fatalf("waiting on its own approval: %+v %v", got, err)
	}

	routes := []struct{ method, path, body string }{
		{"POST", "/v1/approvals/" + a.ID + "/approve", `{"by":"me"}`},
		{"POST", "/v1/approvals/" + a.ID + "/approve", `{"always":true}`},
		{"POST", "/v1/approvals/" + a.ID + "/%61pprove", `{}`},
		{"POST", "/v1/approvals/" + a.ID + "/%64eny", `{}`},
		{"POST", "/v1/approvals/" + a.ID + "/deny", `{"reason":"x"}`},
		{"POST", "/v1/rules", `{"agent":"claude","tool":"Bash","pattern":"*"}`},
		{"DELETE", "/v1/rules/x", ``},
		{"GET", "/v1/rules", ``},
		{"PUT", "/v1/agents/claude/mode", `{"mode":"approve_all"}`},
		{"PUT", "/v1/agents/claude/%6dode", `{"mode":"approve_all"}`},
		{"GET", "/v1/agents/claude/mode", ``},
		{"GET", "/v1/approvals", ``},
		{"GET", "/v1/audit", ``},
		{"GET", "/v1/events", ``},
	}
	tokens := []struct {
		name string
		hdr  map[string]string
	}{
		{"no token", nil},
		{"bad token", map[string]string{"Authorization": "Bearer not-the-approver-token"}},
		{"through a proxy", map[string]string{"X-Forwarded-For": "127.0.0.1"}},
	}
	for _, tk := range tokens {
		for _, rt := range routes {
			req, _ := http.NewRequestWithContext(ctx, rt.method, d.url+rt.path, strings.NewReader(rt.body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tk.hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s: %s %s = %d, want 401 or 403", tk.name, rt.method, rt.path, resp.StatusCode)
			}
		}
	}
	person := api.NewClient(d.url, strings.TrimSpace(string(tok)))
	if got, _ := person.Get(ctx, a.ID, 0); got.Status != gate.StatusPending {
		t.Fatalf("the approval changed to %s", got.Status)
	}
	if rules, _ := person.Rules(ctx, ""); len(rules) != 0 {
		t.Errorf("rules were added: %+v", rules)
	}
	if m, _ := person.Mode(ctx, "claude"); m != gate.ModeInteractive {
		t.Errorf("mode changed to %s", m)
	}

	// The person, on this machine, with no token set.
	cmd := exec.Command(binary(t), "approve", a.ID)
	cmd.Env = append(env, "APPROVALBOT_TOKEN=", "USER=ana")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("approvalbot approve: %v\n%s", err, out)
	}
	got, err := agent.Get(ctx, a.ID, 0)
	if err != nil || got.Status != gate.StatusApproved || !strings.HasPrefix(got.DecidedBy, config.LocalApprover) {
		t.Fatalf("after approve: %+v %v", got, err)
	}
	entries, _ := person.Audit(ctx, 0, 0)
	if last := entries[len(entries)-1]; last.Event != "decided" || !strings.HasPrefix(last.By, config.LocalApprover) {
		t.Errorf("decision audited as %+v", last)
	}

	// A restart keeps the token; a token file others can read stops serve.
	d.kill()
	d = startDaemonEnv(t, addr, env)
	if again, _ := os.ReadFile(tokPath); !bytes.Equal(again, tok) {
		t.Error("the approver token changed across a restart")
	}
	d.kill()
	if err := os.Chmod(tokPath, 0o644); err != nil {
		t.Fatal(err)
	}
	serve := exec.Command(binary(t), "serve")
	serve.Env = append(env, "APPROVALBOT_LISTEN="+addr)
	out, err := serve.CombinedOutput()
	if code := serve.ProcessState.ExitCode(); err == nil || code != exitUsage || !strings.Contains(string(out), "mode 0644") {
		t.Errorf("serve with a 0644 token: exit %d, %s", code, out)
	}
}

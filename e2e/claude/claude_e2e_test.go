//go:build e2e

package claudee2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/e2e/e2etest"
	"approvalbot/gate"
	"approvalbot/prompt"
)

// claudeRunTimeout bounds each claude run.
const claudeRunTimeout = 60 * time.Second

// rules for the daemon: touch is allowed (and so is the write it makes
// inside the project, which the Write rules judge), mkdir denied,
// everything else asks.
const rules = `{
  "*": "ask",
  "Write": { "*": "ask", "./*": "allow" },
  "Bash": { "*": "ask", "touch *": "allow", "mkdir *": "deny", "cd *": "allow" }
}`

// harness is a running daemon, the fake model and a Claude Code settings file.
type harness struct {
	t        *testing.T
	bin      string // approvalbot
	claude   string
	url      string
	fake     *FakeAnthropic
	fakeURL  string
	home     string
	work     string
	settings string
	client   *api.Client
}

func claudeBin(t *testing.T) string {
	if p := os.Getenv("CLAUDE_BIN"); p != "" {
		return p
	}
	p, err := filepath.Abs(filepath.Join(".prefix", "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("Claude Code CLI not found at %s: run e2e/claude/setup.sh first (or set CLAUDE_BIN)", p)
	}
	return p
}

// newHarness starts a daemon and a fake model, and writes Claude settings
// whose PreToolUse hook is `approvalbot hook claude` with hookArgs.
func newHarness(t *testing.T, hookArgs ...string) *harness {
	t.Helper()
	root := t.TempDir()
	h := &harness{t: t, claude: claudeBin(t), home: filepath.Join(root, "home"), work: filepath.Join(root, "work")}
	for _, d := range []string{h.home, h.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.bin, h.url, h.client = startDaemon(t, root)

	h.fake = NewFakeAnthropic()
	srv := httptest.NewServer(h.fake)
	t.Cleanup(srv.Close)
	h.fakeURL = srv.URL
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("fake Anthropic API log:\n%s", h.fake.Log())
		}
	})

	// The README's settings block, with a shorter hook deadline for the test.
	settings := map[string]any{
		"hooks": map[string]any{
			"PreToolUse": []any{map[string]any{
				"matcher": "Bash",
				"hooks": []any{map[string]any{
					"type":      "command",
					"command":   strings.Join(append([]string{h.bin, "hook", "claude", "--timeout", "50s"}, hookArgs...), " "),
					"timeout":   55,
					"onFailure": "block",
				}},
			}},
		},
	}
	b, _ := json.Marshal(settings)
	h.settings = filepath.Join(root, "settings.json")
	if err := os.WriteFile(h.settings, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// claudeP runs `claude -p` with a prompt that makes the fake model ask for command.
func (h *harness) claudeP(ctx context.Context, command string) (string, error) {
	return h.run(ctx, "-p", "Please do this: APPROVALBOT_E2E_RUN[["+command+"]]", "--output-format", "text")
}

// run runs claude with args, the test's settings and model, in the work dir.
func (h *harness) run(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, claudeRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.claude, append(args, "--settings", h.settings, "--model", "claude-sonnet-4-5")...)
	cmd.Dir = h.work
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + h.home,
		"ANTHROPIC_BASE_URL=" + h.fakeURL,
		"ANTHROPIC_API_KEY=sk-ant-e2e-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"APPROVALBOT_URL=" + h.url,
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("claude did not finish in %s", claudeRunTimeout)
	}
	return string(out), err
}

// lastResult returns the single tool_result the fake model received.
func (h *harness) lastResult(out string) ToolResult {
	h.t.Helper()
	rs := h.fake.ToolResults()
	if len(rs) == 0 {
		h.t.Fatalf("the model never received a tool_result; claude said:\n%s", out)
	}
	return rs[len(rs)-1]
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestClaudeCodeAllowedCommandRuns(t *testing.T) {
	h := newHarness(t)
	marker := filepath.Join(h.work, "allowed-marker")
	out, err := h.claudeP(context.Background(), "touch "+marker)
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	if !exists(marker) {
		t.Fatalf("allowed command did not run; claude said:\n%s", out)
	}
	if r := h.lastResult(out); r.IsError {
		t.Fatalf("tool_result is an error: %q", r.Content)
	}
}

func TestClaudeCodeDeniedCommandDoesNotRun(t *testing.T) {
	h := newHarness(t)
	marker := filepath.Join(h.work, "denied-dir")
	out, err := h.claudeP(context.Background(), "mkdir "+marker)
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	if exists(marker) {
		t.Fatal("denied command ran")
	}
	r := h.lastResult(out)
	if !strings.Contains(r.Content, "approvalbot: denied by rule") || !strings.Contains(r.Content, "mkdir") {
		t.Fatalf("the model did not see approvalbot's reason; tool_result: %q", r.Content)
	}
}

func TestClaudeCodeAskedCommandRunsOnlyAfterApproval(t *testing.T) {
	h := newHarness(t)
	src := filepath.Join(h.work, "src")
	if err := os.WriteFile(src, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(h.work, "asked-marker")
	type res struct {
		out string
		err error
	}
	done := make(chan res, 1)
	go func() {
		out, err := h.claudeP(context.Background(), "cp "+src+" "+marker)
		done <- res{out, err}
	}()

	// Wait for the prompt to be pending, then check nothing ran yet.
	ctx, cancel := context.WithTimeout(context.Background(), claudeRunTimeout)
	defer cancel()
	var pending *gate.Approval
	for pending == nil {
		list, err := h.client.List(ctx, gate.StatusPending)
		if err != nil {
			t.Fatalf("list pending: %v", err)
		}
		if len(list) > 0 {
			pending = list[0]
			break
		}
		select {
		case r := <-done:
			t.Fatalf("claude ended before asking: %v\n%s", r.err, r.out)
		case <-ctx.Done():
			t.Fatal("no pending approval appeared")
		case <-time.After(100 * time.Millisecond): // poll interval, bounded by ctx
		}
	}
	if pending.Tool != "Bash" || !strings.Contains(string(pending.Input), "asked-marker") || pending.Agent != "claude-code" {
		t.Fatalf("pending approval %+v", pending)
	}
	if exists(marker) {
		t.Fatal("asked command ran before approval")
	}
	if _, err := h.client.Approve(ctx, pending.ID, false, "", "e2e-tester"); err != nil {
		t.Fatalf("approve: %v", err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("claude: %v\n%s", r.err, r.out)
	}
	if !exists(marker) {
		t.Fatalf("approved command did not run; claude said:\n%s", r.out)
	}
	if tr := h.lastResult(r.out); tr.IsError {
		t.Fatalf("tool_result is an error: %q", tr.Content)
	}
}

// TestClaudeCodeKeptDirectoryIsJudged: Claude Code's Bash tool keeps its
// directory between calls. `cd .claude/agents` then `touch kept-dir.md`
// writes a subagent (which may declare hooks): the second call must be
// judged where it runs, which only a person may allow, not in the
// project's root, where the write would be allowed.
func TestClaudeCodeKeptDirectoryIsJudged(t *testing.T) {
	h := newHarness(t)
	agents := filepath.Join(h.work, ".claude", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	type res struct {
		out string
		err error
	}
	done := make(chan res, 1)
	go func() {
		out, err := h.run(context.Background(), "-p", "Please do this: APPROVALBOT_E2E_RUN[[cd .claude/agents]] and then APPROVALBOT_E2E_RUN[[touch kept-dir.md]]", "--output-format", "text")
		done <- res{out, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), claudeRunTimeout)
	defer cancel()
	var r *res
	for r == nil {
		list, err := h.client.List(ctx, gate.StatusPending)
		if err != nil {
			t.Fatalf("list pending: %v", err)
		}
		if len(list) > 0 {
			a := list[0]
			t.Logf("asked: %s", a.Evaluation.Reason)
			if !strings.Contains(a.Evaluation.Reason, filepath.Join(agents, "kept-dir.md")) {
				t.Errorf("asked about %q, want the write into %s", a.Evaluation.Reason, agents)
			}
			if _, err := h.client.Deny(ctx, a.ID, "e2e", false, "e2e-tester"); err != nil {
				t.Fatalf("deny: %v", err)
			}
			got := <-done
			r = &got
			break
		}
		select {
		case got := <-done:
			r = &got
		case <-ctx.Done():
			t.Fatal("neither an approval nor the end of the run")
		case <-time.After(100 * time.Millisecond): // poll interval, bounded by ctx
		}
	}
	if exists(filepath.Join(agents, "kept-dir.md")) {
		t.Fatalf("the second call ran in %s unasked; claude said:\n%s\nfake model log:\n%s", agents, r.out, h.fake.Log())
	}
	if exists(filepath.Join(h.work, "kept-dir.md")) {
		t.Log("the second call ran in the project root: this version does not keep the directory")
	} else if n := len(h.fake.ToolResults()); n < 2 {
		t.Fatalf("claude made %d calls, want 2; claude said:\n%s", n, r.out)
	}
}

// startDaemon builds approvalbot and runs `approvalbot serve` with the test
// rules on a free loopback port, until the test ends.
func startDaemon(t testing.TB, root string) (bin, url string, client *api.Client) {
	t.Helper()
	return startDaemonRules(t, root, rules)
}

func startDaemonRules(t testing.TB, root, rules string) (bin, url string, client *api.Client) {
	t.Helper()
	bin = e2etest.BuildBinary(t, root)
	home := filepath.Join(root, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	rulesPath := filepath.Join(root, "rules.jsonc")
	if err := os.WriteFile(rulesPath, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	url, client = e2etest.Serve(t, bin, e2etest.FreeAddr(t), filepath.Join(root, "data"),
		"HOME="+home,
		"APPROVALBOT_RULES="+rulesPath,
		"APPROVALBOT_TIMEOUT=2m",
	)
	return bin, url, client
}

// TestClaudeCodeDeferThenResume: with `hook claude --defer`, `claude -p`
// does not wait for a person: it exits with stop_reason "tool_deferred" and
// the approval stays pending (marked deferred, with the resume command in
// the prompt). After the approval, `claude -p --resume SESSION` re-runs the
// hook for the same tool call, which now gets the decision, and the command
// runs.
func TestClaudeCodeDeferThenResume(t *testing.T) {
	h := newHarness(t, "--defer")
	ctx, cancel := context.WithTimeout(context.Background(), 3*claudeRunTimeout)
	defer cancel()
	src := filepath.Join(h.work, "src")
	if err := os.WriteFile(src, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(h.work, "deferred-marker")
	out, err := h.run(ctx, "-p", "Please do this: APPROVALBOT_E2E_RUN[[cp "+src+" "+marker+"]]", "--output-format", "json")
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	var res struct {
		StopReason      string `json:"stop_reason"`
		SessionID       string `json:"session_id"`
		DeferredToolUse struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"deferred_tool_use"`
	}
	if err := json.Unmarshal([]byte(lastLine(out)), &res); err != nil {
		t.Fatalf("claude -p output is not the JSON result: %v\n%s", err, out)
	}
	if res.StopReason != "tool_deferred" || res.SessionID == "" || res.DeferredToolUse.Name != "Bash" {
		t.Fatalf("want a run stopped at a deferred Bash call; got %+v\n%s", res, out)
	}
	if exists(marker) {
		t.Fatal("the deferred command ran before any decision")
	}
	list, err := h.client.List(ctx, gate.StatusPending)
	if err != nil || len(list) != 1 {
		t.Fatalf("pending after the deferred run: %v %d", err, len(list))
	}
	a := list[0]
	if !a.Deferred || a.SessionID != res.SessionID || a.IdempotencyKey != res.DeferredToolUse.ID {
		t.Fatalf("pending approval %+v: want deferred, session %s, key %s", a, res.SessionID, res.DeferredToolUse.ID)
	}
	want := "cd " + h.work + " && claude -p --resume " + res.SessionID
	if got := prompt.ResumeCommand(a); got != want {
		t.Fatalf("resume command %q, want %q", got, want)
	}
	if _, err := h.client.Approve(ctx, a.ID, false, "", "e2e-tester"); err != nil {
		t.Fatal(err)
	}
	out, err = h.run(ctx, "-p", "--resume", res.SessionID, "--output-format", "text")
	if err != nil {
		t.Fatalf("claude --resume: %v\n%s", err, out)
	}
	if !exists(marker) {
		t.Fatalf("the approved command did not run on resume; claude said:\n%s\nmodel log:\n%s", out, h.fake.Log())
	}
	if tr := h.lastResult(out); tr.IsError {
		t.Fatalf("tool_result is an error: %q", tr.Content)
	}
	all, err := h.client.List(ctx, "")
	if err != nil || len(all) != 1 {
		t.Fatalf("approvals after resume: %v %d (want the one, found again by its tool-use id)", err, len(all))
	}
}

// lastLine is the last non-empty line of s (claude -p prints warnings
// before its JSON result).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestClaudeCodeKilledWithdraws: Claude Code killed outright (SIGKILL)
// while its hook waits for a person: the hook sees its parent gone and
// withdraws the approval, so nobody approves a call that will never run.
func TestClaudeCodeKilledWithdraws(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), claudeRunTimeout)
	defer cancel()
	src := filepath.Join(h.work, "src")
	if err := os.WriteFile(src, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(h.work, "killed-marker")
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = h.claudeP(ctx, "cp "+src+" "+marker)
	}()
	var pending *gate.Approval
	for pending == nil {
		list, err := h.client.List(ctx, gate.StatusPending)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 {
			pending = list[0]
			break
		}
		select {
		case <-done:
			t.Fatal("claude ended before asking")
		case <-ctx.Done():
			t.Fatal("no pending approval appeared")
		case <-time.After(100 * time.Millisecond): // poll interval, bounded by ctx
		}
	}
	pids := e2etest.HookPIDs(h.bin, "claude")
	if len(pids) != 1 {
		t.Fatalf("hook processes %v, want 1", pids)
	}
	parent := e2etest.PPID(pids[0])
	if parent <= 1 {
		t.Fatalf("hook %d has no parent to kill", pids[0])
	}
	if err := syscall.Kill(parent, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for {
		a, err := h.client.Get(ctx, pending.ID, 0)
		if err == nil && a.Status.Final() {
			if a.Status != gate.StatusCancelled {
				t.Fatalf("approval is %s after Claude Code was killed, want cancelled", a.Status)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the approval was not withdrawn")
		case <-time.After(100 * time.Millisecond): // poll interval, bounded by ctx
		}
	}
	if exists(marker) {
		t.Fatal("the command ran")
	}
}

//go:build e2e

package agentse2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// copilotVersion is the GitHub Copilot CLI under test.
const copilotVersion = "1.0.102"

var copilotOnce sync.Once

// TestCopilotCLI: Copilot CLI's native preToolUse hook, set up by
// `approvalbot install copilot`, gates its bash tool; offline, with a
// bring-your-own-key provider pointed at the fake.
func TestCopilotCLI(t *testing.T) {
	t.Parallel()
	runAgentSuite(t, agentCase{name: "copilot", setup: func(h *harness) (func(string) []string, []string) {
		bin, env := copilotSetup(t, h)
		return func(prompt string) []string {
			return []string{bin, "-p", prompt, "--allow-all-tools", "--no-auto-update"}
		}, env
	}})
}

// copilotSetup installs Copilot CLI (once per run) and approvalbot's hook,
// and returns the CLI and the environment of an offline run against the
// fake model.
func copilotSetup(t *testing.T, h *harness) (bin string, env []string) {
	copilotOnce.Do(func() { npmInstall(t, filepath.Join(root, "npm-copilot"), "@github/copilot@"+copilotVersion) })
	h.install()
	return filepath.Join(root, "npm-copilot", "node_modules", ".bin", "copilot"),
		[]string{"COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL=" + h.fakeURL + "/v1", "COPILOT_PROVIDER_API_KEY=fake-key",
			"COPILOT_MODEL=gpt-4.1", "XDG_CACHE_HOME=" + filepath.Join(root, "copilot-cache")}
}

// TestCopilotRepositorySettingsTurnHooksOff: in a folder the person
// trusts, Copilot CLI reads .github/copilot/settings.local.json from the
// repository it runs in, and "disableAllHooks" there turns approvalbot's
// hook off, so a command the rules deny runs. That is why the gate denies
// an agent every write into .github/copilot; the test checks both halves.
func TestCopilotRepositorySettingsTurnHooksOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "copilot")
	bin, env := copilotSetup(t, h)
	// Copilot finds repository settings at the git root.
	if out, err := exec.Command("git", "init", "-q", h.work).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	settings := filepath.Join(h.work, ".github", "copilot", "settings.local.json")

	write := `printf '{"disableAllHooks":true}' > ` + settings
	check := exec.Command(h.bin, "check", "--rules", filepath.Join(filepath.Dir(h.home), "rules.jsonc"), "--cwd", h.work, "--", write)
	check.Env = h.env
	if out, err := check.CombinedOutput(); err != nil || !strings.Contains(string(out), "decision: deny") {
		t.Fatalf("the gate on an agent's write of %s: %v\n%s", settings, err, out)
	}

	// mkdir is denied by the test rules; COPILOT_ALLOW_ALL also marks the
	// folder trusted, which is what loads repository settings.
	runMkdir := func(name string) (string, bool) {
		marker := filepath.Join(h.work, name)
		r := h.start(context.Background(), []string{bin, "-p", "Please do this: APPROVALBOT_E2E_RUN[[mkdir " + marker + "]]", "--no-auto-update"},
			append(env, "COPILOT_ALLOW_ALL=true")...)
		return r.wait(t), exists(marker)
	}
	if out, ran := runMkdir("denied-before"); ran {
		t.Fatalf("the denied command ran with approvalbot's hook in place:\n%s", out)
	}
	// As if the write had been let through: the next run's denied command runs.
	h.writeFile(settings, `{"disableAllHooks":true}`)
	if out, ran := runMkdir("denied-after"); !ran {
		t.Fatalf("with disableAllHooks in the repository settings the hook still ran (the deny above guards nothing); the agent said:\n%s", out)
	}
}

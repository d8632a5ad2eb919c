//go:build e2e

package agentse2e

import (
	"path/filepath"
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
		copilotOnce.Do(func() { npmInstall(t, filepath.Join(root, "npm-copilot"), "@github/copilot@"+copilotVersion) })
		bin := filepath.Join(root, "npm-copilot", "node_modules", ".bin", "copilot")
		h.install()
		return func(prompt string) []string {
				return []string{bin, "-p", prompt, "--allow-all-tools", "--no-auto-update"}
			}, []string{"COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL=" + h.fakeURL + "/v1", "COPILOT_PROVIDER_API_KEY=fake-key",
				"COPILOT_MODEL=gpt-4.1", "XDG_CACHE_HOME=" + filepath.Join(root, "copilot-cache")}
	}})
}

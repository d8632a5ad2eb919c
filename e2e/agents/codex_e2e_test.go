//go:build e2e

package agentse2e

import (
	"path/filepath"
	"sync"
	"testing"
)

// codexVersion is the Codex CLI under test.
const codexVersion = "0.169.0"

var codexOnce sync.Once

// TestCodex: Codex's PreToolUse hook, set up by `approvalbot install
// codex`, gates its shell tool. `codex exec` runs only trusted hooks; the
// trust step is the person's (install says so), so the test passes
// --dangerously-bypass-hook-trust, as automation would.
func TestCodex(t *testing.T) {
	t.Parallel()
	runAgentSuite(t, agentCase{name: "codex", setup: func(h *harness) (func(string) []string, []string) {
		codexOnce.Do(func() { npmInstall(t, filepath.Join(root, "npm-codex"), "@openai/codex@"+codexVersion) })
		codexBin := filepath.Join(root, "npm-codex", "node_modules", ".bin", "codex")
		h.writeFile(".codex/config.toml", `model = "gpt-5"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "`+h.fakeURL+`/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
`)
		h.install()
		return func(prompt string) []string {
			return []string{codexBin, "exec", "--dangerously-bypass-hook-trust", "-s", "danger-full-access", "--skip-git-repo-check", prompt}
		}, []string{"FAKE_API_KEY=fake-key", "CODEX_HOME=" + filepath.Join(h.home, ".codex")}
	}})
}

//go:build e2e

package agentse2e

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// opencodeVersion is the opencode CLI under test (and its plugin package).
const opencodeVersion = "1.18.33"

var opencodeOnce sync.Once

// TestOpencode: the plugin `approvalbot install opencode` writes gates
// opencode's bash tool through tool.execute.before.
func TestOpencode(t *testing.T) {
	t.Parallel()
	runAgentSuite(t, agentCase{name: "opencode", setup: func(h *harness) (func(string) []string, []string) {
		opencodeOnce.Do(func() {
			npmInstall(t, filepath.Join(root, "npm-opencode"), "opencode-ai@"+opencodeVersion)
			// With a plugin present opencode installs @opencode-ai/plugin
			// into its config dir at start; offline that waits ~70 s, so it
			// is installed once here and copied into each HOME.
			npmInstall(t, filepath.Join(root, "npm-opencode-plugin"), "@opencode-ai/plugin@"+opencodeVersion)
		})
		bin := filepath.Join(root, "npm-opencode", "node_modules", ".bin", "opencode")
		cfg := filepath.Join(h.home, ".config", "opencode")
		h.writeFile(filepath.Join(cfg, "opencode.json"), `{
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "fake/fake-model",
  "permission": {"bash": "allow", "edit": "allow", "external_directory": "allow"},
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "fake",
      "options": {"baseURL": "`+h.fakeURL+`/v1", "apiKey": "fake-key"},
      "models": {"fake-model": {"name": "fake-model", "tool_call": true}}
    }
  }
}`)
		for _, f := range []string{"node_modules", "package.json", "package-lock.json"} {
			if out, err := exec.Command("cp", "-a", filepath.Join(root, "npm-opencode-plugin", f), cfg+"/").CombinedOutput(); err != nil {
				t.Fatalf("copy %s: %v\n%s", f, err, out)
			}
		}
		h.install()
		return func(prompt string) []string {
				return []string{bin, "run", "--model", "fake/fake-model", prompt}
			}, []string{"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
				"OPENCODE_DISABLE_DEFAULT_PLUGINS=1"}
	}})
}

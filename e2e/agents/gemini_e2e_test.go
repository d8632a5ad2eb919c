//go:build e2e

package agentse2e

import (
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
)

// geminiVersion is the Gemini CLI under test.
const geminiVersion = "0.61.0"

var geminiOnce sync.Once

// TestGeminiCLI: Gemini CLI's BeforeTool hook, set up by `approvalbot
// install gemini`, gates run_shell_command.
func TestGeminiCLI(t *testing.T) {
	t.Parallel()
	var geminiBin string
	runAgentSuite(t, agentCase{name: "gemini", setup: func(h *harness) (func(string) []string, []string) {
		geminiOnce.Do(func() {
			dir := npmInstall(t, filepath.Join(root, "npm-gemini"), "@google/gemini-cli@"+geminiVersion)
			geminiBin = filepath.Join(dir, "node_modules", ".bin", "gemini")
		})
		if geminiBin == "" {
			geminiBin = filepath.Join(root, "npm-gemini", "node_modules", ".bin", "gemini")
		}
		// Offline with an API key against the fake; the work dir trusted
		// (Gemini CLI skips hooks in an untrusted folder).
		h.writeFile(".gemini/settings.json", `{"security":{"auth":{"selectedType":"gemini-api-key"}},
 "general":{"disableAutoUpdate":true,"disableUpdateNag":true},"telemetry":{"enabled":false},"privacy":{"usageStatisticsEnabled":false}}`)
		trusted, _ := json.Marshal(map[string]string{h.work: "TRUST_FOLDER"})
		h.writeFile(".gemini/trustedFolders.json", string(trusted))
		h.install()
		return func(prompt string) []string {
				return []string{geminiBin, "-p", prompt, "--yolo", "-m", "gemini-2.5-pro"}
			}, []string{
				"GEMINI_API_KEY=fake-key",
				"GOOGLE_GEMINI_BASE_URL=" + h.fakeURL,
			}
	}})
}

package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestQuickStart follows README.md's quick start on a clean home directory:
// the built binary, `serve` on its embedded defaults, a `check`, a call
// through the HTTP API that asks, and an approval from the CLI.
func TestQuickStart(t *testing.T) {
	home := t.TempDir()
	addr := freeAddr(t) // the default port may be taken on a shared machine
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "APPROVALBOT_URL=http://" + addr}
	d := startDaemonEnv(t, addr, base)

	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(binary(t), args...)
		cmd.Env, cmd.Dir = base, home
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("approvalbot %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	// check, offline, on the embedded default rules.
	var chk struct {
		Decision string `json:"decision"`
		Commands []struct {
			Decision string `json:"decision"`
		} `json:"commands"`
	}
	if err := json.Unmarshal([]byte(run("check", "--json", "--", "git status && rm -rf /")), &chk); err != nil {
		t.Fatal(err)
	}
	// git status allowed, rm denied (and its write of / judged too).
	if chk.Decision != "deny" || len(chk.Commands) < 2 || chk.Commands[0].Decision != "allow" || chk.Commands[1].Decision != "deny" {
		t.Errorf("check = %+v, want deny: git status allowed, rm denied", chk)
	}

	// A call that asks, through the API, waiting for a person.
	body := `{"agent":"claude","session_id":"s1","tool":"Bash","input":{"command":"npm install left-pad"},"cwd":"` + home + `"}`
	type answer struct {
		ID, Status, Decision, DecidedBy string
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Post(d.url+"/v1/calls?wait=60s", "application/json", strings.NewReader(body))
		if err != nil {
			t.Error(err)
			got <- answer{}
			return
		}
		defer resp.Body.Close()
		var a struct {
			ID        string `json:"id"`
			Status    string `json:"status"`
			Decision  string `json:"decision"`
			DecidedBy string `json:"decided_by"`
		}
		json.NewDecoder(resp.Body).Decode(&a)
		got <- answer{a.ID, a.Status, a.Decision, a.DecidedBy}
	}()

	// The CLI sees it pending and approves it.
	var id string
	deadline := time.Now().Add(20 * time.Second)
	for id == "" {
		var list struct {
			Approvals []struct {
				ID string `json:"id"`
			} `json:"approvals"`
		}
		if err := json.Unmarshal([]byte(run("pending", "--json")), &list); err == nil && len(list.Approvals) == 1 {
			id = list.Approvals[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatal("the call never showed in `approvalbot pending`")
		}
		time.Sleep(20 * time.Millisecond)
	}
	run("approve", id)
	a := <-got
	if a.ID != id || a.Status != "approved" || a.Decision != "allow" || a.DecidedBy == "" {
		t.Errorf("the waiting call got %+v", a)
	}
	// The default data dir under the new home holds the store.
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "approvalbot", "approvalbot.db")); err != nil {
		t.Errorf("default data dir: %v", err)
	}
	if out := run("audit", "--verify"); !strings.Contains(out, "audit chain OK") {
		t.Errorf("audit --verify: %s", out)
	}
	var buf bytes.Buffer
	buf.WriteString(run("version"))
	if !strings.HasPrefix(buf.String(), "approvalbot ") {
		t.Errorf("version = %q", buf.String())
	}

	// The README's agent setup: `approvalbot install claude` writes the
	// hook into ~/.claude/settings.json, by absolute path, failing closed.
	run("install", "claude")
	raw, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if err != nil {
		t.Fatalf("install claude wrote no settings: %v", err)
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command   string `json:"command"`
				Timeout   int    `json:"timeout"`
				OnFailure string `json:"onFailure"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(raw, &settings); err != nil {
		t.Fatalf("settings.json: %v\n%s", err, raw)
	}
	found := false
	for _, m := range settings.Hooks["PreToolUse"] {
		for _, h := range m.Hooks {
			f := strings.Fields(h.Command) // [NAME=VALUE ...] BINARY hook claude
			if len(f) >= 3 && strings.HasSuffix(h.Command, " hook claude") && filepath.IsAbs(f[len(f)-3]) &&
				h.OnFailure == "block" && h.Timeout > 600 {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("install claude: no fail-closed PreToolUse hook by absolute path with a timeout above the approval's:\n%s", raw)
	}
}

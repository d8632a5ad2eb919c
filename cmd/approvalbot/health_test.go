package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalbot/config"
	"approvalbot/gate"
	"approvalbot/store"
)

// TestRulesReloadSameSizeAndMtime: a rules file replaced by one of the same
// size and modification time (cp -p, rsync -a) is reloaded: serve compares
// content, not size and mtime.
func TestRulesReloadSameSizeAndMtime(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.jsonc")
	before, after := `{ "Bash": { "echo *": "allow" } }`, `{ "Bash": { "echo *": "deny"  } }`
	if len(before) != len(after) {
		t.Fatal("the two rule files must be the same size")
	}
	if err := os.WriteFile(rules, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(rules)
	if err != nil {
		t.Fatal(err)
	}
	s := config.Settings{DataDir: filepath.Join(dir, "data"), Rules: rules}
	stamp := config.RulesStamp(rules) // as serve does, before the load
	p, err := loadPolicy(s, "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "approvalbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := gate.New(gate.Config{}, p, st, nil)
	defer g.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		config.WatchRules(ctx, s.Rules, func() (*gate.Policy, error) { return loadPolicy(s, "") }, g, stamp, time.Millisecond, slog.New(slog.DiscardHandler))
	}()
	defer func() { cancel(); <-done }()

	echo := gate.Call{Agent: "a", Tool: "Bash", Input: json.RawMessage(`{"command":"echo hi"}`), Cwd: dir}
	decision := func() gate.Action {
		ev, err := g.Evaluate(ctx, echo)
		if err != nil {
			t.Fatal(err)
		}
		return ev.Decision
	}
	if d := decision(); d != gate.Allow {
		t.Fatalf("before: %s, want allow", d)
	}
	tmp := filepath.Join(dir, "rules.new")
	if err := os.WriteFile(tmp, []byte(after), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, rules); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for decision() != gate.Deny {
		if time.Now().After(deadline) {
			t.Fatal("same-size, same-mtime rules never reloaded")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestServeRefusesEmptyStore: a zero-byte approvalbot.db stops serve with
// a message naming the setting, unless APPROVALBOT_INIT_EMPTY_STORE=true.
func TestServeRefusesEmptyStore(t *testing.T) {
	dataDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "approvalbot.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "serve")
	cmd.Env = append(os.Environ(), "APPROVALBOT_DATA_DIR="+dataDir, "APPROVALBOT_LISTEN="+freeAddr(t))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "APPROVALBOT_INIT_EMPTY_STORE") {
		t.Fatalf("serve on a zero-byte store: %v\n%s", err, out)
	}
	startDaemon(t, freeAddr(t), "APPROVALBOT_DATA_DIR="+dataDir, "APPROVALBOT_INIT_EMPTY_STORE=true")
}

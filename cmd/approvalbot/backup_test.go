package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"approvalbot/api"
	"approvalbot/gate"
	"approvalbot/gate/gatetest"
	"approvalbot/store"
)

// TestBackupAndVerifyCopy: `backup FILE` takes a consistent copy from a
// daemon on a real bbolt store while it runs; `audit --verify --db FILE`
// checks the copy without a daemon, and catches an entry edited in it.
func TestBackupAndVerifyCopy(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "approvalbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	keyPath := filepath.Join(dir, store.AuditKeyFile)
	key, err := store.EnsureAuditKey(keyPath, 1)
	if err != nil {
		t.Fatal(err)
	}
	st.UseAuditKey(key)
	env := gatetest.New(t, gatetest.Options{Store: st, Config: gate.Config{Now: time.Now}})
	for _, cmd := range []string{"make a", "make b", "make c"} {
		env.Ask(t, gatetest.Bash(cmd))
	}
	ts := httptest.NewServer(api.NewServer(api.Config{AdminTokens: map[string]string{cliAdminToken: "ana"},
		AgentTokens: map[string]string{"agent-token-0123456789": "claude"}}, env.G, nil))
	t.Cleanup(ts.Close)
	want, err := env.G.VerifyAudit(context.Background())
	if err != nil || want == 0 {
		t.Fatalf("live chain: %d %v", want, err)
	}

	copyPath := filepath.Join(dir, "backup.db")
	code, out, errOut := run(t, ts.URL, cliAdminToken, "backup", "--key", keyPath, copyPath)
	if code != exitOK || !strings.Contains(out, "audit chain OK") {
		t.Fatalf("backup: %d %q %q", code, out, errOut)
	}
	code, out, errOut = run(t, "http://127.0.0.1:1", "", "audit", "--verify", "--db", copyPath, "--key", keyPath)
	if code != exitOK || !strings.Contains(out, "audit chain OK") || !strings.Contains(out, "keyed") || strings.Contains(out, "NOT keyed") {
		t.Fatalf("audit --verify --db --key: %d %q %q", code, out, errOut)
	}
	// An agent token cannot take a copy of everything.
	if code, _, _ := run(t, ts.URL, "agent-token-0123456789", "backup", filepath.Join(dir, "x.db")); code == exitOK {
		t.Fatal("an agent token took a backup")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.db")); err == nil {
		t.Fatal("a refused backup left a file")
	}

	// Edit one audit entry in the copy: the check must fail.
	db, err := bolt.Open(copyPath, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("audit"))
		k, v := b.Cursor().First()
		var m map[string]any
		if err := json.Unmarshal(v, &m); err != nil {
			return err
		}
		m["agent"] = "someone-else"
		nv, _ := json.Marshal(m)
		return b.Put(bytes.Clone(k), nv)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut = run(t, "http://127.0.0.1:1", "", "audit", "--verify", "--db", copyPath, "--key", keyPath)
	if code == exitOK || !strings.Contains(errOut, "does NOT verify") {
		t.Fatalf("an edited copy verified: %d %q", code, errOut)
	}
}

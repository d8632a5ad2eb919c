package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
	"approvalbot/store"
)

var update = flag.Bool("update", false, "rewrite testdata/approval.golden.json")

// TestApprovalGolden pins the on-disk JSON of an approval, the format a
// restarted (or upgraded) daemon must still read: a real gate on a real
// bbolt file asks about a shell call and a person approves it; the bytes
// stored in the approvals bucket must equal the golden file, and the golden
// file must decode and re-encode to itself, so no field is dropped or
// renamed silently. Run with -update after a deliberate format change, and
// keep decoding of the old form working.
func TestApprovalGolden(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "approvalbot.db")
	st, err := store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := gate.Compile(gate.PolicySpec{File: "rules.jsonc", Rules: []gate.RuleSpec{
		{Tool: "*", Pattern: "*", Action: gate.Ask, File: "rules.jsonc", Line: 1},
		{Tool: "Bash", Pattern: "echo *", Action: gate.Allow, File: "rules.jsonc", Line: 2},
	}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	g := gate.New(gate.Config{Timeout: 10 * time.Minute, Now: func() time.Time { return now }}, p, st, nil)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// A path that does not exist, so nothing on this machine's disk changes
	// the evaluation.
	a, err := g.Submit(ctx, gate.Call{Agent: "claude-code", SessionID: "sess-1", Tool: "Bash",
		Input:          json.RawMessage(`{"command":"rm -rf build && echo done > out.txt","description":"clean"}`),
		Cwd:            "/nonexistent/approvalbot-golden/project",
		IdempotencyKey: "toolu_golden"})
	if err != nil || a.Status != gate.StatusPending {
		t.Fatalf("submit: %v %+v", err, a)
	}
	if _, err := st.UpdateApproval(ctx, a.ID, func(a *gate.Approval) error {
		a.Messages = append(a.Messages, gate.MessageRef{Frontend: "telegram", ChatID: "-100123", MessageID: "42", SentAt: now})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Decide(ctx, a.ID, gate.Decision{Approve: true, Reason: "looks fine", By: "ana", Via: "telegram", Digest: a.Digest}); err != nil {
		t.Fatalf("approve: %v", err)
	}
	g.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	raw := readStoredApproval(t, dbPath, a.ID)
	raw = bytes.ReplaceAll(raw, []byte(a.ID), []byte("APPROVAL-ID"))
	var got bytes.Buffer
	if err := json.Indent(&got, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	golden := filepath.Join("testdata", "approval.golden.json")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("stored approval changed format; diff it against %s (go test -run TestApprovalGolden -update ./store/ after a deliberate change):\n%s", golden, got.String())
	}

	// Every field of the golden file survives a decode and re-encode.
	var back gate.Approval
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatalf("the golden approval does not decode: %v", err)
	}
	again, err := json.MarshalIndent(&back, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if string(again)+"\n" != string(want) {
		t.Errorf("the golden approval does not survive decode and encode:\n%s", again)
	}
	if back.Status != gate.StatusApproved || back.Judged == nil || len(back.Messages) != 1 ||
		!strings.Contains(string(back.Input), `"rm -rf build`) {
		t.Errorf("the golden approval lost what it pins: %+v", back)
	}
}

// readStoredApproval reads the approvals bucket directly (the 8-byte
// sequence number, then the JSON), as another version of the daemon would.
func readStoredApproval(t *testing.T, path, id string) []byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []byte
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("approvals"))
		if b == nil {
			t.Fatal("no approvals bucket")
		}
		v := b.Get([]byte(id))
		if len(v) < 8 {
			t.Fatalf("approval %s: record of %d bytes", id, len(v))
		}
		out = append([]byte(nil), v[8:]...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

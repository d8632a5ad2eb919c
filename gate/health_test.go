package gate_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"approvalbot/gate"
	"approvalbot/store"
)

// TestHealthStoreUnwritable: a store that reads but cannot be written (here
// a real bbolt file opened read-only, as after the file system went
// read-only) makes Health not OK, naming the store; a writable one is OK.
func TestHealthStoreUnwritable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "approvalbot.db")
	rw, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := gate.New(gate.Config{}, testPolicy(t), rw, nil)
	if h := g.Health(ctx); !h.OK || h.StoreError != "" {
		t.Fatalf("writable store: %+v, want OK", h)
	}
	g.Close()
	rw.Close()

	ro, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	g = gate.New(gate.Config{}, testPolicy(t), ro, nil)
	defer g.Close()
	h := g.Health(ctx)
	if h.OK || !strings.Contains(h.StoreError, "cannot be written") {
		t.Fatalf("read-only store: %+v, want not OK with a store error", h)
	}
}

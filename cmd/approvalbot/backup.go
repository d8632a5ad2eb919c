package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"approvalbot/store"
)

// runBackup is `approvalbot backup FILE`: a consistent copy of the running
// daemon's database, written beside FILE, checked (page structure and
// audit chain) and only then renamed to FILE.
func runBackup(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "backup", "backup FILE")
	pos, code, ok := parseFlags(e, fs, args, 1)
	if !ok {
		return code
	}
	dst := pos[0]
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-*")
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot backup: %v\n", err)
		return exitFailure
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	c := approverClientFromEnv(e)
	n, err := c.Backup(ctx, tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return clientFailed(e, "backup", c, err)
	}
	entries, err := verifyCopy(ctx, tmp.Name())
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot backup: the copy does not check out, not kept: %v\n", err)
		return exitFailure
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		fmt.Fprintf(e.stderr, "approvalbot backup: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(e.stdout, "backed up %d bytes to %s (audit chain OK: %d entries)\n", n, dst, entries)
	return exitOK
}

// verifyCopy opens a database file read-only, as a daemon would (the
// damaged-file check), and verifies its audit chain.
func verifyCopy(ctx context.Context, path string) (int, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, err
	}
	st, err := store.Open(path, store.Options{ReadOnly: true, LockTimeout: -1})
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return st.VerifyAudit(ctx)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"approvalbot/config"
	"approvalbot/store"
)

// runBackup is `approvalbot backup FILE`: a consistent copy of the running
// daemon's database, written beside FILE, checked (page structure, and the
// audit chain when the audit key is at hand) and only then renamed to FILE.
func runBackup(ctx context.Context, e *env, args []string) int {
	flags := newFlags(e, "backup", "backup [--key FILE] FILE")
	keyFile := flags.String("key", "", "the audit key file to check the copy's chain with (default: DATA_DIR/audit.key)")
	pos, code, ok := parseFlags(e, flags, args, 1)
	if !ok {
		return code
	}
	dst := pos[0]
	kp := *keyFile
	if kp == "" {
		kp = auditKeyPath(e)
	}
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
	checked := "audit chain not checked: no audit key here (give --key)"
	if _, err := os.Stat(kp); kp != "" && err == nil {
		entries, _, err := verifyCopy(ctx, tmp.Name(), kp)
		if err != nil {
			fmt.Fprintf(e.stderr, "approvalbot backup: the copy does not check out, not kept: %v\n", err)
			return exitFailure
		}
		checked = fmt.Sprintf("audit chain OK: %d entries, keyed", entries)
	} else if err := openCopy(tmp.Name()); err != nil {
		fmt.Fprintf(e.stderr, "approvalbot backup: the copy does not check out, not kept: %v\n", err)
		return exitFailure
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		fmt.Fprintf(e.stderr, "approvalbot backup: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(e.stdout, "backed up %d bytes to %s (%s)\n", n, dst, checked)
	return exitOK
}

// verifyCopy opens a database file read-only, as a daemon would (the
// damaged-file check), and verifies its audit chain, keyed by the key in
// keyPath ("" or a missing file: unkeyed, which a re-hash would pass).
func verifyCopy(ctx context.Context, path, keyPath string) (int, bool, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, false, err
	}
	var key *store.AuditKey
	if keyPath != "" {
		k, err := store.ReadAuditKey(keyPath)
		switch {
		case err == nil:
			key = k
		case !errors.Is(err, fs.ErrNotExist):
			return 0, false, err
		}
	}
	st, err := store.Open(path, store.Options{ReadOnly: true, LockTimeout: -1})
	if err != nil {
		return 0, false, err
	}
	defer st.Close()
	st.UseAuditKey(key)
	n, err := st.VerifyAudit(ctx)
	return n, key != nil, err
}

// openCopy opens a database file read-only, which runs the damaged-file
// check, and closes it.
func openCopy(path string) error {
	st, err := store.Open(path, store.Options{ReadOnly: true, LockTimeout: -1})
	if err != nil {
		return err
	}
	return st.Close()
}

// auditKeyPath is the audit key of this machine's data dir ("" if unknown).
func auditKeyPath(e *env) string {
	dir, err := config.DataDir(e.getenv)
	if err != nil {
		return ""
	}
	return filepath.Join(dir, store.AuditKeyFile)
}

func keyedNote(keyed bool) string {
	if keyed {
		return "keyed"
	}
	return "NOT keyed: no audit key found, so a keyed chain fails and a re-hashed one would pass; give --key"
}

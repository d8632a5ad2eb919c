package config

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ApproverTokenFile is the approver credential's file in the data dir,
// made by `serve` when no APPROVALBOT_ADMIN_TOKENS are set.
const ApproverTokenFile = "approver.token"

// LocalApprover is the approver name of the token in ApproverTokenFile, as
// decisions, rule changes and mode changes made with it are recorded.
const LocalApprover = "local-approver"

// approverTokenBytes is the token's entropy: 256 bits, as a bearer token.
const approverTokenBytes = 32

// ApproverTokenPath is where the approver token of dataDir lives.
func ApproverTokenPath(dataDir string) string { return filepath.Join(dataDir, ApproverTokenFile) }

// EnsureApproverToken returns the approver token of dataDir, creating the
// file (mode 0600, random) when there is none. Creation is atomic: the
// token is written to a private temporary file and linked into place, so
// a reader never sees a partial token and two racing starts keep one
// token. An existing file that others may read or write (any group or
// other permission bit), that another user owns, or that is not a regular
// file is refused rather than repaired: the token may already have leaked,
// so the fix is to remove the file and start again, which makes a new one.
func EnsureApproverToken(dataDir string) (token string, created bool, err error) {
	path := ApproverTokenPath(dataDir)
	if tok, err := ReadApproverToken(dataDir, true); err == nil {
		return tok, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", false, fmt.Errorf("create data dir %s: %w", dataDir, err)
	}
	b := make([]byte, approverTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", false, fmt.Errorf("make approver token: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(b)
	tmp, err := os.CreateTemp(dataDir, ".approver.token-*") // mode 0600
	if err != nil {
		return "", false, fmt.Errorf("write approver token: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(tok + "\n")
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", false, fmt.Errorf("write approver token %s: %w", tmp.Name(), werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another start made it first: use that one.
			tok, err := ReadApproverToken(dataDir, true)
			return tok, false, err
		}
		return "", false, fmt.Errorf("create approver token %s: %w", path, err)
	}
	if d, err := os.Open(dataDir); err == nil { // make the new name durable
		_ = d.Sync()
		d.Close()
	}
	return tok, true, nil
}

// ReadApproverToken reads the approver token of dataDir. With strict (the
// daemon), the file must be a regular file of this user that nobody else
// may read or write; clients read it as it is (the daemon refuses to start
// on a loose file, and a client only sends it to the daemon).
func ReadApproverToken(dataDir string, strict bool) (string, error) {
	path := ApproverTokenPath(dataDir)
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("approver token: %w", err)
	}
	defer f.Close()
	if strict {
		fi, err := f.Stat()
		if err != nil {
			return "", fmt.Errorf("approver token: %w", err)
		}
		if err := privateFile(path, fi); err != nil {
			return "", err
		}
	}
	b := make([]byte, 256)
	n, err := f.Read(b)
	if err != nil && n == 0 {
		return "", fmt.Errorf("read approver token %s: %w", path, err)
	}
	tok := strings.TrimSpace(string(b[:n]))
	if len(tok) < 16 || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("approver token %s is malformed: remove it and restart `approvalbot serve` to make a new one", path)
	}
	return tok, nil
}

// privateFile refuses a token file others could have read or changed.
func privateFile(path string, fi fs.FileInfo) error {
	fix := "remove it and restart `approvalbot serve` to make a new one (the token may have leaked)"
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("approver token %s is not a regular file: %s", path, fix)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("approver token %s has mode %04o, want 0600: %s", path, perm, fix)
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("approver token %s belongs to uid %d, not to this user (uid %d): %s", path, uid, os.Getuid(), fix)
	}
	return nil
}

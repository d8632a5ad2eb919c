package gate

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
)

// maxIndexBytes bounds the git index read to judge one call.
const maxIndexBytes = 64 << 20

// trackedOnly keeps the files git tracks in the repository whose work tree
// holds dir (git grep and git diff read only those, from the work tree).
// When the index cannot be read exactly (none, a .git file, a split or
// sparse index, an unknown version) it keeps every file: the read is then
// judged as a recursive read of the tree.
func trackedOnly(dir string, files []string) []string {
	root, ok := workTreeRoot(dir)
	if !ok {
		return files
	}
	gitDir, _, ok := gitDirs(root)
	if !ok {
		return files
	}
	tracked, ok := readIndex(gitDir)
	if !ok {
		return files
	}
	out := files[:0:0]
	listed := make(map[string]bool, len(files))
	nested := map[string]bool{} // directory → it or a parent below root is another repository
	for _, f := range files {
		listed[f] = true
		rel, err := filepath.Rel(root, f)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || tracked[filepath.ToSlash(rel)] ||
			inNestedRepo(root, filepath.Dir(f), nested) {
			// Outside the tree, tracked, or in a submodule (whose files
			// this index does not list, and git grep/diff may read with
			// --recurse-submodules or --submodule=diff).
			out = append(out, f)
		}
	}
	// A tracked file missing from the disk (deleted, or kept with
	// assume-unchanged) is printed from the index: git diff shows it
	// whole as deleted.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		for rel := range tracked {
			if abs := filepath.Join(root, filepath.FromSlash(rel)); !listed[abs] && under(abs, real) {
				out = append(out, abs)
			}
		}
	}
	return out
}

// inNestedRepo reports whether dir, or a directory between it and root,
// holds a .git of its own.
func inNestedRepo(root, dir string, memo map[string]bool) bool {
	if dir == root || len(dir) <= len(root) {
		return false
	}
	if v, ok := memo[dir]; ok {
		return v
	}
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	v := err == nil || inNestedRepo(root, filepath.Dir(dir), memo)
	memo[dir] = v
	return v
}

// workTreeRoot returns the directory at or above dir holding a .git
// (physical path), as git finds it: a directory, or a file naming one (a
// linked worktree, a submodule).
func workTreeRoot(dir string) (string, bool) {
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// gitDirs returns the git directory of the work tree at root (its index,
// HEAD) and the common one (objects, refs, info/exclude): root/.git for
// both, or where a .git file leads (a submodule's .git/modules/NAME, a
// linked worktree's .git/worktrees/NAME and its commondir).
func gitDirs(root string) (gitDir, common string, ok bool) {
	dot := filepath.Join(root, ".git")
	if directory(dot) {
		return dot, dot, true
	}
	gitDir, ok = gitFileTarget(dot)
	if !ok || !directory(gitDir) {
		return "", "", false
	}
	common = gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = filepath.Clean(c)
	}
	return gitDir, common, true
}

// readIndex returns the paths (slash-separated, relative to the work tree)
// in the index of the repository at gitDir: versions 2 to 4, SHA-1 or
// SHA-256 object names. ok is false for anything it cannot read exactly.
func readIndex(gitDir string) (map[string]bool, bool) {
	if shared, _ := filepath.Glob(filepath.Join(gitDir, "sharedindex.*")); len(shared) > 0 {
		return nil, false // a split index: entries live in two files
	}
	hashLen := 20
	if cfg, err := os.ReadFile(filepath.Join(gitDir, "config")); err != nil {
		return nil, false
	} else if bytes.Contains(bytes.ToLower(cfg), []byte("objectformat")) {
		if !bytes.Contains(bytes.ToLower(cfg), []byte("sha256")) {
			return nil, false
		}
		hashLen = 32
	}
	f, err := os.Open(filepath.Join(gitDir, "index"))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIndexBytes {
		return nil, false
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, false
	}
	return parseIndex(b, hashLen)
}

// parseIndex reads the entries of a git index file (see git's
// Documentation/gitformat-index.txt).
func parseIndex(b []byte, hashLen int) (map[string]bool, bool) {
	if len(b) < 12+hashLen || string(b[:4]) != "DIRC" || !indexChecksum(b, hashLen) {
		return nil, false
	}
	b = b[:len(b)-hashLen]
	ver := binary.BigEndian.Uint32(b[4:])
	n := binary.BigEndian.Uint32(b[8:])
	if ver < 2 || ver > 4 || uint64(n) > uint64(len(b)) {
		return nil, false
	}
	fixed := 40 + hashLen + 2 // ten 32-bit stat fields, the object name, flags
	out := make(map[string]bool, n)
	off, prev := 12, ""
	for range n {
		start := off
		if off+fixed > len(b) {
			return nil, false
		}
		flags := binary.BigEndian.Uint16(b[off+40+hashLen:])
		off += fixed
		if flags&0x4000 != 0 { // extended flags
			if ver < 3 || off+2 > len(b) {
				return nil, false
			}
			off += 2
		}
		var name string
		if ver == 4 {
			strip, w, ok := indexVarint(b[off:])
			if !ok || strip > uint64(len(prev)) {
				return nil, false
			}
			off += w
			end := bytes.IndexByte(b[off:], 0)
			if end < 0 {
				return nil, false
			}
			name = prev[:len(prev)-int(strip)] + string(b[off:off+end])
			off += end + 1
		} else {
			end := bytes.IndexByte(b[off:], 0)
			if end < 0 {
				return nil, false
			}
			name = string(b[off : off+end])
			off = start + ((off-start)+end+8)&^7 // NUL-padded to 8 bytes
			if off > len(b) {
				return nil, false
			}
		}
		if name == "" || strings.HasSuffix(name, "/") {
			return nil, false // a sparse directory entry stands for files not listed
		}
		out[name] = true
		prev = name
	}
	return out, true
}

// indexChecksum checks the trailing hash of the whole file (all zeros
// when git wrote it with index.skipHash).
func indexChecksum(b []byte, hashLen int) bool {
	body, sum := b[:len(b)-hashLen], b[len(b)-hashLen:]
	if bytes.Count(sum, []byte{0}) == hashLen {
		return true
	}
	if hashLen == 32 {
		h := sha256.Sum256(body)
		return bytes.Equal(h[:], sum)
	}
	h := sha1.Sum(body)
	return bytes.Equal(h[:], sum)
}

// indexVarint decodes the variable-length number of index version 4 (the
// offset encoding of git's varint.c, not LEB128).
func indexVarint(b []byte) (uint64, int, bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	c := b[0]
	v := uint64(c & 127)
	i := 1
	for c&128 != 0 {
		if i >= len(b) || i > 9 {
			return 0, 0, false
		}
		c = b[i]
		i++
		v = (v+1)<<7 | uint64(c&127)
	}
	return v, i, true
}

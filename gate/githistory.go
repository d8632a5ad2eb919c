package gate

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// A repository's history is judged by the paths its object store holds:
// `git show COMMIT`, `git log -p` and `git diff REV` print files as they
// were committed, so a .env committed once and removed is still printed.
// The store is read directly (loose objects and packs, never git itself,
// whose config can run programs): every tree, from every commit and every
// tree no other tree holds, walked into full paths.

// Bounds on what one history read may cost; beyond them the gate cannot
// tell, and asks.
const (
	maxHistoryObjects = 500_000
	maxHistoryPaths   = 1_000_000
	maxTreeBytes      = 256 << 20
)

var errHistoryTooLarge = errors.New("the repository is too large to read here")

// historyCache remembers the paths of a repository's history while its
// object store is unchanged (the same packs, loose object directories and
// index).
type historyCache struct {
	mu      sync.Mutex
	entries map[string]historyEntry // git dir → paths
}

type historyEntry struct {
	stamp string
	h     *repoHistory
	err   error
}

// repoHistory is what a repository's object store holds.
type repoHistory struct {
	// paths are every path of every tree, and of the index, sorted.
	paths []string
	// unnamed are the blobs no tree names (raw object names): `git show
	// BLOB` prints one, and nothing says what file it was.
	unnamed map[string]bool
	// tagged are objects tag objects point at.
	tagged  map[string]bool
	hashLen int
}

// history returns what the object store of the repository at gitDir holds.
func (c *historyCache) history(gitDir string) (*repoHistory, error) {
	stamp, err := objectStoreStamp(gitDir)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if e, ok := c.entries[gitDir]; ok && e.stamp == stamp {
		c.mu.Unlock()
		return e.h, e.err
	}
	c.mu.Unlock()
	h, err := readHistory(gitDir)
	c.mu.Lock()
	if c.entries == nil || len(c.entries) > 64 {
		c.entries = map[string]historyEntry{}
	}
	c.entries[gitDir] = historyEntry{stamp: stamp, h: h, err: err}
	c.mu.Unlock()
	return h, err
}

// objectStoreStamp fingerprints what the history is read from: a new
// object lands in a loose directory (its mtime changes) or a new pack.
func objectStoreStamp(gitDir string) (string, error) {
	var b strings.Builder
	objects := filepath.Join(gitDir, "objects")
	add := func(p string) error {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	}
	for _, p := range []string{filepath.Join(gitDir, "index"), filepath.Join(gitDir, "config"), objects, filepath.Join(objects, "pack"), filepath.Join(objects, "info", "alternates")} {
		if err := add(p); err != nil {
			return "", err
		}
	}
	for i := 0; i < 256; i++ {
		if err := add(filepath.Join(objects, fmt.Sprintf("%02x", i))); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// object kinds as packs number them.
const (
	objCommit   = 1
	objTree     = 2
	objBlob     = 3
	objTag      = 4
	objOfsDelta = 6
	objRefDelta = 7
)

// objectStore reads the objects of one repository.
type objectStore struct {
	dir     string // .git/objects
	hashLen int
	packs   []*pack
	where   map[string]objLoc // object name (raw bytes) → where it is
	trees   map[string][]byte // tree name → content
	commits []string          // the root tree of every commit
	blobs   []string          // every blob
	tagged  map[string]bool   // what tag objects point at
	budget  int               // tree bytes still allowed
}

type objLoc struct {
	pack *pack // nil for a loose object
	off  int64
}

type pack struct {
	f     *os.File
	types map[int64]int    // offset → kind once resolved
	cache map[int64][]byte // offset → content of trees and commits (delta bases)
}

// readHistory reads the sorted, de-duplicated paths of every blob in every
// tree of the repository at gitDir, and of its index, and the blobs no tree
// names.
func readHistory(gitDir string) (*repoHistory, error) {
	hashLen := 20
	if cfg, err := os.ReadFile(filepath.Join(gitDir, "config")); err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	} else if bytes.Contains(bytes.ToLower(cfg), []byte("objectformat")) {
		if !bytes.Contains(bytes.ToLower(cfg), []byte("sha256")) {
			return nil, errors.New("an unknown object format")
		}
		hashLen = 32
	}
	objects := filepath.Join(gitDir, "objects")
	if alt, err := os.ReadFile(filepath.Join(objects, "info", "alternates")); err == nil && len(bytes.TrimSpace(alt)) > 0 {
		return nil, errors.New("its objects are partly in another repository (alternates)")
	}
	st := &objectStore{dir: objects, hashLen: hashLen, where: map[string]objLoc{}, trees: map[string][]byte{}, tagged: map[string]bool{}, budget: maxTreeBytes}
	defer st.close()
	if err := st.index(); err != nil {
		return nil, err
	}
	if err := st.load(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	named := map[string]bool{}
	if idx, ok := readIndex(gitDir); ok {
		for p := range idx {
			seen[p] = true
		}
	} else if exists(filepath.Join(gitDir, "index")) {
		return nil, errors.New("its index cannot be read")
	}
	// Roots: every commit's tree, and every tree no other tree holds
	// (a stash's, or one written by hand with git mktree).
	held := map[string]bool{}
	for _, t := range st.trees {
		if err := walkTree(t, hashLen, func(name string, dir bool, id string) bool {
			if dir {
				held[id] = true
			}
			return true
		}); err != nil {
			return nil, err
		}
	}
	roots := append([]string(nil), st.commits...)
	for id := range st.trees {
		if !held[id] {
			roots = append(roots, id)
		}
	}
	sort.Strings(roots)
	visits := 0
	visited := map[string]bool{} // tree + "\x00" + prefix
	var walk func(id, prefix string) error
	walk = func(id, prefix string) error {
		key := id + "\x00" + prefix
		if visited[key] {
			return nil
		}
		visited[key] = true
		t, ok := st.trees[id]
		if !ok {
			return nil // not in this store (a shallow or partial clone): git cannot print it either
		}
		var err error
		werr := walkTree(t, hashLen, func(name string, dir bool, sub string) bool {
			if visits++; visits > maxHistoryPaths {
				err = errHistoryTooLarge
				return false
			}
			if dir {
				if err = walk(sub, prefix+name+"/"); err != nil {
					return false
				}
				return true
			}
			seen[prefix+name] = true
			named[sub] = true
			return true
		})
		if err != nil {
			return err
		}
		return werr
	}
	for _, r := range roots {
		if err := walk(r, ""); err != nil {
			return nil, err
		}
	}
	h := &repoHistory{paths: make([]string, 0, len(seen)), unnamed: map[string]bool{}, tagged: st.tagged, hashLen: hashLen}
	for p := range seen {
		h.paths = append(h.paths, p)
	}
	sort.Strings(h.paths)
	for _, b := range st.blobs {
		if !named[b] {
			h.unnamed[b] = true
		}
	}
	return h, nil
}

// prints reports whether a revision word may print a blob no tree names:
// an object name (or a prefix of one) of such a blob or of a tag pointing
// at one, or a ref that leads to one (gitDir's refs are read now, since
// they change without new objects).
func (h *repoHistory) printsUnnamed(gitDir, word string) bool {
	if len(h.unnamed) == 0 {
		return false
	}
	if word == "" {
		return true // object names read from standard input: any of them
	}
	// Any run of hex digits may be an object name, peeled or not
	// (0cfc659^{blob}, 0cfc659^{}, 0cfc659:).
	runs := hexRuns(strings.ToLower(word))
	for id := range h.unnamed {
		x := hex.EncodeToString([]byte(id))
		for _, r := range runs {
			if strings.HasPrefix(x, r) {
				return true
			}
		}
		if h.tagged[id] {
			return true // a tag object names it: any ref may reach it
		}
	}
	refs, ok := readRefs(gitDir)
	if !ok {
		return true
	}
	for _, r := range refs {
		if raw, err := hex.DecodeString(r); err == nil && h.unnamed[string(raw)] {
			return true
		}
	}
	return false
}

// hexRuns returns the runs of four or more hex digits in s.
func hexRuns(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		hexDigit := i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f')
		switch {
		case hexDigit && start < 0:
			start = i
		case !hexDigit && start >= 0:
			if i-start >= 4 {
				out = append(out, s[start:i])
			}
			start = -1
		}
	}
	return out
}

// readRefs returns the object names of every ref of the repository at
// gitDir (loose refs and packed-refs); ok is false when they cannot all be
// read.
func readRefs(gitDir string) ([]string, bool) {
	var out []string
	n := 0
	err := filepath.WalkDir(filepath.Join(gitDir, "refs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > 50_000 {
			return errHistoryTooLarge
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, strings.TrimSpace(string(b)))
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimPrefix(l, "^") // a peeled tag
		if id, _, ok := strings.Cut(l, " "); ok && !strings.HasPrefix(l, "#") {
			out = append(out, id)
		} else if len(l) >= 40 && !strings.HasPrefix(l, "#") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out, true
}

// walkTree calls fn for each entry of a tree object: its name, whether it
// is a tree, and its object name (raw bytes). Submodule entries (commits of
// another repository) are skipped.
func walkTree(t []byte, hashLen int, fn func(name string, dir bool, id string) bool) error {
	for len(t) > 0 {
		sp := bytes.IndexByte(t, ' ')
		nul := bytes.IndexByte(t, 0)
		if sp < 0 || nul < sp || len(t) < nul+1+hashLen {
			return errors.New("a damaged tree object")
		}
		mode, name, id := string(t[:sp]), string(t[sp+1:nul]), string(t[nul+1:nul+1+hashLen])
		t = t[nul+1+hashLen:]
		if mode == "160000" {
			continue
		}
		if !fn(name, mode == "40000" || mode == "040000", id) {
			return nil
		}
	}
	return nil
}

func (st *objectStore) close() {
	for _, p := range st.packs {
		p.f.Close()
	}
}

// index lists where every object is: each pack's .idx, then the loose
// objects.
func (st *objectStore) index() error {
	idxs, err := filepath.Glob(filepath.Join(st.dir, "pack", "*.idx"))
	if err != nil {
		return err
	}
	for _, idx := range idxs {
		f, err := os.Open(strings.TrimSuffix(idx, ".idx") + ".pack")
		if err != nil {
			return fmt.Errorf("open pack: %w", err)
		}
		p := &pack{f: f, types: map[int64]int{}, cache: map[int64][]byte{}}
		st.packs = append(st.packs, p)
		if err := st.readPackIndex(idx, p); err != nil {
			return fmt.Errorf("read %s: %w", filepath.Base(idx), err)
		}
	}
	for i := 0; i < 256; i++ {
		sub := fmt.Sprintf("%02x", i)
		ents, err := os.ReadDir(filepath.Join(st.dir, sub))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range ents {
			raw, err := hex.DecodeString(sub + e.Name())
			if err != nil || len(raw) != st.hashLen {
				continue // a temporary file
			}
			st.where[string(raw)] = objLoc{}
		}
		if len(st.where) > maxHistoryObjects {
			return errHistoryTooLarge
		}
	}
	return nil
}

// readPackIndex reads a version 2 pack index (gitformat-pack.txt).
func (st *objectStore) readPackIndex(path string, p *pack) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(b) < 8+256*4 || !bytes.Equal(b[:4], []byte{0xff, 't', 'O', 'c'}) || binary.BigEndian.Uint32(b[4:8]) != 2 {
		return errors.New("not a version 2 pack index")
	}
	n := int(binary.BigEndian.Uint32(b[8+255*4:]))
	if n > maxHistoryObjects || len(st.where)+n > maxHistoryObjects {
		return errHistoryTooLarge
	}
	names := 8 + 256*4
	offs := names + n*st.hashLen + n*4
	large := offs + n*4
	if len(b) < large {
		return errors.New("a truncated pack index")
	}
	for i := 0; i < n; i++ {
		id := string(b[names+i*st.hashLen : names+(i+1)*st.hashLen])
		off := int64(binary.BigEndian.Uint32(b[offs+i*4:]))
		if off&0x80000000 != 0 {
			j := large + int(off&0x7fffffff)*8
			if j+8 > len(b) {
				return errors.New("a truncated pack index")
			}
			off = int64(binary.BigEndian.Uint64(b[j:]))
		}
		st.where[id] = objLoc{pack: p, off: off}
	}
	return nil
}

// load reads every tree and the root tree of every commit.
func (st *objectStore) load() error {
	ids := make([]string, 0, len(st.where))
	for id := range st.where {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		kind, err := st.kind(id)
		if err != nil {
			return err
		}
		switch kind {
		case objBlob:
			st.blobs = append(st.blobs, id)
		case objTag:
			c, err := st.content(id)
			if err != nil {
				return err
			}
			if hexID, ok := bytes.CutPrefix(c, []byte("object ")); ok && len(hexID) >= 2*st.hashLen {
				if raw, err := hex.DecodeString(string(hexID[:2*st.hashLen])); err == nil {
					st.tagged[string(raw)] = true
				}
			}
		case objTree:
			if _, err := st.tree(id); err != nil {
				return err
			}
		case objCommit:
			c, err := st.content(id)
			if err != nil {
				return err
			}
			hexID, ok := bytes.CutPrefix(c, []byte("tree "))
			if !ok || len(hexID) < 2*st.hashLen {
				return errors.New("a commit without a tree")
			}
			raw, err := hex.DecodeString(string(hexID[:2*st.hashLen]))
			if err != nil {
				return errors.New("a commit with a damaged tree name")
			}
			st.commits = append(st.commits, string(raw))
		}
	}
	return nil
}

func (st *objectStore) tree(id string) ([]byte, error) {
	if t, ok := st.trees[id]; ok {
		return t, nil
	}
	t, err := st.content(id)
	if err != nil {
		return nil, err
	}
	if st.where[id].pack == nil {
		if st.budget -= len(t); st.budget < 0 {
			return nil, errHistoryTooLarge
		}
	}
	st.trees[id] = t
	return t, nil
}

// kind returns an object's kind, following deltas to their base.
func (st *objectStore) kind(id string) (int, error) {
	loc, ok := st.where[id]
	if !ok {
		return 0, errors.New("an object is missing")
	}
	if loc.pack == nil {
		kind, _, err := st.loose(id, false)
		return kind, err
	}
	return st.packKind(loc.pack, loc.off, 0)
}

func (st *objectStore) packKind(p *pack, off int64, depth int) (int, error) {
	if k, ok := p.types[off]; ok {
		return k, nil
	}
	if depth > 64 {
		return 0, errors.New("a delta chain too long")
	}
	h, err := st.header(p, off)
	if err != nil {
		return 0, err
	}
	k := h.kind
	switch h.kind {
	case objOfsDelta:
		k, err = st.packKind(p, h.baseOff, depth+1)
	case objRefDelta:
		loc, ok := st.where[h.baseID]
		switch {
		case !ok:
			return 0, errors.New("a delta's base is missing")
		case loc.pack == nil:
			k, _, err = st.loose(h.baseID, false)
		default:
			k, err = st.packKind(loc.pack, loc.off, depth+1)
		}
	}
	if err != nil {
		return 0, err
	}
	p.types[off] = k
	return k, nil
}

type packHeader struct {
	kind    int
	size    int64
	baseOff int64
	baseID  string
	data    int64 // where the compressed data starts
}

func (st *objectStore) header(p *pack, off int64) (packHeader, error) {
	var buf [16 + 32]byte
	n, err := p.f.ReadAt(buf[:], off)
	if n == 0 {
		return packHeader{}, fmt.Errorf("read pack object: %w", err)
	}
	b := buf[:n]
	h := packHeader{kind: int(b[0]>>4) & 7, size: int64(b[0] & 15)}
	i, shift := 1, 4
	for c := b[0]; c&0x80 != 0; i++ {
		if i >= len(b) {
			return h, errors.New("a damaged pack object header")
		}
		c = b[i]
		h.size |= int64(c&0x7f) << shift
		shift += 7
	}
	switch h.kind {
	case objOfsDelta:
		if i >= len(b) {
			return h, errors.New("a damaged delta header")
		}
		c := b[i]
		v := int64(c & 0x7f)
		for i++; c&0x80 != 0; i++ {
			if i >= len(b) {
				return h, errors.New("a damaged delta header")
			}
			c = b[i]
			v = (v+1)<<7 | int64(c&0x7f)
		}
		h.baseOff = off - v
		if h.baseOff <= 0 {
			return h, errors.New("a delta base out of the pack")
		}
	case objRefDelta:
		if i+st.hashLen > len(b) {
			return h, errors.New("a damaged delta header")
		}
		h.baseID = string(b[i : i+st.hashLen])
		i += st.hashLen
	case objCommit, objTree, objBlob, objTag:
	default:
		return h, fmt.Errorf("an unknown pack object kind %d", h.kind)
	}
	h.data = off + int64(i)
	return h, nil
}

// content returns an object's content, deltas applied.
func (st *objectStore) content(id string) ([]byte, error) {
	loc, ok := st.where[id]
	if !ok {
		return nil, errors.New("an object is missing")
	}
	if loc.pack == nil {
		_, b, err := st.loose(id, true)
		return b, err
	}
	return st.packContent(loc.pack, loc.off, 0)
}

func (st *objectStore) packContent(p *pack, off int64, depth int) ([]byte, error) {
	if b, ok := p.cache[off]; ok {
		return b, nil
	}
	b, err := st.packContentUncached(p, off, depth)
	if err != nil {
		return nil, err
	}
	if k, err := st.packKind(p, off, 0); err == nil && k != objBlob {
		if st.budget -= len(b); st.budget < 0 {
			return nil, errHistoryTooLarge
		}
		p.cache[off] = b
	}
	return b, nil
}

func (st *objectStore) packContentUncached(p *pack, off int64, depth int) ([]byte, error) {
	if depth > 64 {
		return nil, errors.New("a delta chain too long")
	}
	h, err := st.header(p, off)
	if err != nil {
		return nil, err
	}
	if h.size > maxTreeBytes {
		return nil, errHistoryTooLarge
	}
	data, err := inflate(io.NewSectionReader(p.f, h.data, 1<<62), h.size)
	if err != nil {
		return nil, err
	}
	var base []byte
	switch h.kind {
	case objOfsDelta:
		base, err = st.packContent(p, h.baseOff, depth+1)
	case objRefDelta:
		if loc, ok := st.where[h.baseID]; ok && loc.pack != nil {
			base, err = st.packContent(loc.pack, loc.off, depth+1)
		} else {
			base, err = st.content(h.baseID)
		}
	default:
		return data, nil
	}
	if err != nil {
		return nil, err
	}
	return applyDelta(base, data)
}

// loose reads a loose object: its kind, and with full its content.
func (st *objectStore) loose(id string, full bool) (int, []byte, error) {
	h := hex.EncodeToString([]byte(id))
	f, err := os.Open(filepath.Join(st.dir, h[:2], h[2:]))
	if err != nil {
		return 0, nil, fmt.Errorf("open loose object: %w", err)
	}
	defer f.Close()
	z, err := zlib.NewReader(bufio.NewReader(f))
	if err != nil {
		return 0, nil, fmt.Errorf("read loose object: %w", err)
	}
	defer z.Close()
	br := bufio.NewReader(z)
	hdr, err := br.ReadString(0)
	if err != nil {
		return 0, nil, errors.New("a damaged loose object")
	}
	name, size, _ := strings.Cut(strings.TrimSuffix(hdr, "\x00"), " ")
	kind := map[string]int{"commit": objCommit, "tree": objTree, "blob": objBlob, "tag": objTag}[name]
	if kind == 0 {
		return 0, nil, errors.New("a loose object of an unknown kind")
	}
	if !full {
		return kind, nil, nil
	}
	var n int64
	if _, err := fmt.Sscan(size, &n); err != nil || n < 0 || n > maxTreeBytes {
		return 0, nil, errHistoryTooLarge
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(br, b); err != nil {
		return 0, nil, errors.New("a truncated loose object")
	}
	return kind, b, nil
}

func inflate(r io.Reader, size int64) ([]byte, error) {
	z, err := zlib.NewReader(bufio.NewReader(r))
	if err != nil {
		return nil, fmt.Errorf("inflate pack object: %w", err)
	}
	defer z.Close()
	b := make([]byte, size)
	if _, err := io.ReadFull(z, b); err != nil {
		return nil, fmt.Errorf("inflate pack object: %w", err)
	}
	return b, nil
}

// applyDelta rebuilds an object from its base and a git delta.
func applyDelta(base, d []byte) ([]byte, error) {
	varint := func() (int, bool) {
		v, shift := 0, 0
		for len(d) > 0 && shift < 56 {
			c := d[0]
			d = d[1:]
			v |= int(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	if !ok1 || !ok2 || srcSize != len(base) || dstSize < 0 || dstSize > maxTreeBytes {
		return nil, errors.New("a damaged delta")
	}
	out := make([]byte, 0, dstSize)
	for len(d) > 0 {
		op := d[0]
		d = d[1:]
		if op&0x80 != 0 {
			// The low bits say which bytes of the offset (4) and the
			// size (3) follow, least significant first.
			var v [7]int
			for i := range v {
				if op&(1<<i) != 0 {
					if len(d) == 0 {
						return nil, errors.New("a damaged delta")
					}
					v[i] = int(d[0])
					d = d[1:]
				}
			}
			off := v[0] | v[1]<<8 | v[2]<<16 | v[3]<<24
			n := v[4] | v[5]<<8 | v[6]<<16
			if n == 0 {
				n = 0x10000
			}
			if off < 0 || n < 0 || off+n > len(base) {
				return nil, errors.New("a damaged delta")
			}
			out = append(out, base[off:off+n]...)
			continue
		}
		if op == 0 || int(op) > len(d) {
			return nil, errors.New("a damaged delta")
		}
		out = append(out, d[:op]...)
		d = d[op:]
	}
	if len(out) != dstSize {
		return nil, errors.New("a damaged delta")
	}
	return out, nil
}

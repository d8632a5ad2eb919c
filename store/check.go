package store

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// checkFile walks the page structure of a bbolt file, with bounds-checked
// reads (of a read-only mapping where the platform has one: one mmap instead
// of a read and a copy per page, which made the check most of the start-up
// time of a large store), before bbolt is trusted with it. bbolt itself trusts
// its pages: a damaged page can send it into a cycle (a stack overflow), a
// page count of billions (out of memory) or a read outside the mapping, and
// none of those is a recoverable panic. This check catches exactly those
// shapes (page ids past the end, bad page types, overflow past the end,
// elements outside their page, pages reached twice, a bad freelist) so a
// damaged file is refused with an error instead of crashing the daemon. It
// does not validate keys and values; decoding does that.
//
// The layout (bbolt's internal/common: page header, meta, branch and leaf
// elements, inline buckets) is read in native byte order, as bbolt writes it.
func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	c := &fileChecker{f: f, size: fi.Size()}
	if c.size == 0 {
		return nil // new file: bbolt initialises it
	}
	data, unmap, err := mapFile(f, c.size)
	if err == nil {
		defer unmap()
		c.data = data
	}
	return c.run()
}

// at returns the n bytes at off (fewer at the end of the file, with
// io.EOF): a slice of the mapping when there is one, else a fresh read.
func (c *fileChecker) at(off int64, n int) ([]byte, error) {
	if c.data == nil {
		buf := make([]byte, n)
		k, err := c.f.ReadAt(buf, off)
		return buf[:k], err
	}
	if off < 0 || off >= int64(len(c.data)) {
		return nil, io.EOF
	}
	if end := off + int64(n); end <= int64(len(c.data)) {
		return c.data[off:end:end], nil
	}
	return c.data[off:], io.EOF
}

// bbolt's on-disk layout constants (go.etcd.io/bbolt/internal/common).
const (
	pageHeaderSize   = 16 // id u64, flags u16, count u16, overflow u32
	elementSize      = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10
	bucketLeafFlag   = 0x01
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	noFreelist       = ^uint64(0)
	maxTreeDepth     = 64 // a B+tree of 2^64 keys is far shallower
	metaChecksumEnd  = 56 // the meta checksum covers the 56 bytes before it
	metaSize         = 64
)

var ne = binary.NativeEndian

type fileChecker struct {
	f        *os.File
	size     int64
	data     []byte // the file, mapped read-only; nil where it is read instead
	pageSize uint64
	hwm      uint64   // pages below this id are in use or free
	seen     []uint64 // a bit per page id below hwm: reached already
}

type boltMeta struct {
	pageSize, root, freelist, hwm, txid uint64
}

// readMeta reads and validates the meta page at offset off.
func (c *fileChecker) readMeta(off int64) (boltMeta, bool) {
	b, err := c.at(off, pageHeaderSize+metaSize)
	if err != nil {
		return boltMeta{}, false
	}
	m := b[pageHeaderSize:]
	if ne.Uint32(m[0:]) != boltMagic || ne.Uint32(m[4:]) != boltVersion {
		return boltMeta{}, false
	}
	h := fnv.New64a()
	h.Write(m[:metaChecksumEnd])
	if h.Sum64() != ne.Uint64(m[metaChecksumEnd:]) {
		return boltMeta{}, false
	}
	return boltMeta{
		pageSize: uint64(ne.Uint32(m[8:])), root: ne.Uint64(m[16:]),
		freelist: ne.Uint64(m[32:]), hwm: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:]),
	}, true
}

func (c *fileChecker) run() error {
	// bbolt uses the valid meta page with the higher txid. If neither is
	// valid, bbolt's own error is clearer: leave it to bbolt.
	m0, ok0 := c.readMeta(0)
	if !ok0 {
		m0 = boltMeta{pageSize: 4096}
	}
	m1, ok1 := c.readMeta(int64(m0.pageSize))
	var m boltMeta
	switch {
	case ok0 && ok1:
		m = m0
		if m1.txid > m0.txid && m1.pageSize == m0.pageSize {
			m = m1
		}
	case ok0:
		m = m0
	case ok1:
		m = m1
	default:
		return nil
	}
	if m.pageSize < 512 || m.pageSize > 1<<20 || m.pageSize&(m.pageSize-1) != 0 {
		return fmt.Errorf("meta page: page size %d", m.pageSize)
	}
	c.pageSize, c.hwm = m.pageSize, m.hwm
	if c.hwm < 2 || c.hwm > uint64(c.size)/c.pageSize {
		return fmt.Errorf("meta page: %d pages in use but the file holds %d (truncated?)", c.hwm, uint64(c.size)/c.pageSize)
	}
	if m.freelist != noFreelist {
		if err := c.checkFreelist(m.freelist); err != nil {
			return err
		}
	}
	return c.checkBucketRoot(m.root, 0)
}

// readPage reads page id with its overflow pages, checking the header.
func (c *fileChecker) readPage(id uint64, wantFlags uint16) ([]byte, error) {
	if id < 2 || id >= c.hwm {
		return nil, fmt.Errorf("page %d: outside the %d pages in use", id, c.hwm)
	}
	// One read for the page (most have no overflow); the header is in it.
	buf, err := c.at(int64(id*c.pageSize), int(c.pageSize))
	if len(buf) < pageHeaderSize {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	hdr := buf[:pageHeaderSize]
	if got := ne.Uint64(hdr); got != id {
		return nil, fmt.Errorf("page %d: header says page %d", id, got)
	}
	flags := ne.Uint16(hdr[8:])
	if flags == 0 || flags&^wantFlags != 0 || flags == branchPageFlag|leafPageFlag {
		return nil, fmt.Errorf("page %d: unexpected page type %#x", id, flags)
	}
	overflow := uint64(ne.Uint32(hdr[12:]))
	if id+overflow >= c.hwm {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the %d pages in use", id, overflow, c.hwm)
	}
	if c.seen == nil {
		c.seen = make([]uint64, c.hwm/64+1)
	}
	for p := id; p <= id+overflow; p++ {
		if c.seen[p/64]&(1<<(p%64)) != 0 {
			return nil, fmt.Errorf("page %d: reached twice (a cycle or a shared page)", p)
		}
		c.seen[p/64] |= 1 << (p % 64)
	}
	if overflow > 0 {
		if buf, err = c.at(int64(id*c.pageSize), int((overflow+1)*c.pageSize)); err != nil && err != io.EOF {
			return nil, fmt.Errorf("page %d: %w", id, err)
		}
	} else if err != nil && err != io.EOF {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	return buf, nil
}

func (c *fileChecker) checkFreelist(id uint64) error {
	buf, err := c.readPage(id, freelistPageFlag)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	count, start := uint64(ne.Uint16(buf[10:])), uint64(pageHeaderSize)
	if count == 0xFFFF { // the real count is the first element
		if len(buf) < pageHeaderSize+8 {
			return fmt.Errorf("freelist page %d: too short", id)
		}
		count, start = ne.Uint64(buf[pageHeaderSize:]), pageHeaderSize+8
	}
	if count > (uint64(len(buf))-start)/8 {
		return fmt.Errorf("freelist page %d: %d ids do not fit in the page", id, count)
	}
	for i := range count {
		if free := ne.Uint64(buf[start+8*i:]); free < 2 || free >= c.hwm {
			return fmt.Errorf("freelist page %d: free page %d outside the %d pages in use", id, free, c.hwm)
		}
	}
	return nil
}

// checkBucketRoot checks the tree of a bucket whose root is page id.
func (c *fileChecker) checkBucketRoot(id uint64, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("page %d: nested too deep", id)
	}
	buf, err := c.readPage(id, branchPageFlag|leafPageFlag)
	if err != nil {
		return err
	}
	return c.checkNode(id, buf, depth)
}

// checkNode checks the elements of one branch or leaf page (or an inline
// bucket's page, with id 0) and descends into what they point at.
func (c *fileChecker) checkNode(id uint64, buf []byte, depth int) error {
	if len(buf) < pageHeaderSize {
		return fmt.Errorf("page %d: too short", id)
	}
	flags, count := ne.Uint16(buf[8:]), uint64(ne.Uint16(buf[10:]))
	if count*elementSize > uint64(len(buf)-pageHeaderSize) {
		return fmt.Errorf("page %d: %d elements do not fit in the page", id, count)
	}
	for i := range count {
		off := pageHeaderSize + i*elementSize
		e := buf[off : off+elementSize]
		switch flags {
		case branchPageFlag:
			pos, ksize := uint64(ne.Uint32(e[0:])), uint64(ne.Uint32(e[4:]))
			if off+pos+ksize > uint64(len(buf)) {
				return fmt.Errorf("page %d: element %d runs past the page", id, i)
			}
			if err := c.checkBucketRoot(ne.Uint64(e[8:]), depth+1); err != nil {
				return err
			}
		case leafPageFlag:
			eflags, pos := ne.Uint32(e[0:]), uint64(ne.Uint32(e[4:]))
			ksize, vsize := uint64(ne.Uint32(e[8:])), uint64(ne.Uint32(e[12:]))
			end := off + pos + ksize + vsize
			if end > uint64(len(buf)) {
				return fmt.Errorf("page %d: element %d runs past the page", id, i)
			}
			if eflags&bucketLeafFlag == 0 {
				continue
			}
			v := buf[off+pos+ksize : end]
			if len(v) < 16 {
				return fmt.Errorf("page %d: element %d: bucket header too short", id, i)
			}
			if root := ne.Uint64(v); root != 0 {
				if err := c.checkBucketRoot(root, depth+1); err != nil {
					return err
				}
			} else if err := c.checkNode(0, v[16:], depth+1); err != nil { // inline bucket
				return fmt.Errorf("inline bucket in page %d: %w", id, err)
			}
		default:
			return fmt.Errorf("page %d: unexpected page type %#x", id, flags)
		}
	}
	return nil
}

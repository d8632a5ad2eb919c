//go:build unix

package store

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only. A fault on the mapping (the file
// shrank under the check) is a panic under guard, so a damaged-file error.
func mapFile(f *os.File, size int64) ([]byte, func(), error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, fmt.Errorf("map %d bytes: bad size", size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map store file: %w", err)
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}

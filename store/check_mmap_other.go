//go:build !unix

package store

import (
	"errors"
	"os"
)

// mapFile is not available here: the check reads the file page by page.
func mapFile(*os.File, int64) ([]byte, func(), error) {
	return nil, nil, errors.New("no mmap on this platform")
}

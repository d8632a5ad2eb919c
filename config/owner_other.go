//go:build !unix

package config

import "io/fs"

// fileOwner is unknown where files have no uid.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

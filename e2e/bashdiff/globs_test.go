//go:build e2e

package bashdiff

import "approvalbot/shell"

// globsOf returns which words of c.Argv are unquoted pathname patterns
// (nil: none).
func globsOf(c shell.Command) []bool { return c.Globs }

//go:build !linux

package watch

// flushInput is a no-op where tcflush is not wired up; the model's guard
// time alone drops keys typed before a box appeared.
func flushInput(fd int) {}

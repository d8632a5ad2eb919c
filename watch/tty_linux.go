package watch

import "golang.org/x/sys/unix"

// flushInput discards the terminal's pending input (tcflush(fd, TCIFLUSH)).
// An error leaves the input as it is; the model's guard time still drops
// keys read too early.
func flushInput(fd int) { _ = unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }

package watch

import (
	"fmt"
	"os"

	"golang.org/x/term"
)

// Terminal is the controlling terminal, switched to raw mode so every key
// arrives at once and Ctrl+C arrives as a key rather than a signal.
type Terminal struct {
	in, out *os.File
	state   *term.State
}

// OpenTerminal puts in (a terminal) in raw mode. Call Restore when done.
func OpenTerminal(in, out *os.File) (*Terminal, error) {
	if !term.IsTerminal(int(in.Fd())) {
		return nil, fmt.Errorf("%s is not a terminal", in.Name())
	}
	st, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return nil, fmt.Errorf("raw mode on %s: %w", in.Name(), err)
	}
	return &Terminal{in: in, out: out, state: st}, nil
}

// Restore returns the terminal to the mode it had.
func (t *Terminal) Restore() error {
	if err := term.Restore(int(t.in.Fd()), t.state); err != nil {
		return fmt.Errorf("restore terminal mode: %w", err)
	}
	return nil
}

// Size returns the terminal's width and height.
func (t *Terminal) Size() (width, height int, err error) {
	if w, h, err := term.GetSize(int(t.out.Fd())); err == nil {
		return w, h, nil
	}
	return term.GetSize(int(t.in.Fd()))
}

// Flush discards input typed but not yet read, so a key pressed before a
// box appeared cannot answer it.
func (t *Terminal) Flush() { flushInput(int(t.in.Fd())) }

// ColorEnabled reports whether out gets colours: only a terminal, and not
// when NO_COLOR is set (https://no-color.org) or TERM is dumb.
func ColorEnabled(out *os.File, getenv func(string) string) bool {
	return term.IsTerminal(int(out.Fd())) && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

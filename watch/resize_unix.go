//go:build unix

package watch

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// NotifyResize returns a channel that receives when the terminal is
// resized (SIGWINCH), until ctx ends.
func NotifyResize(ctx context.Context) <-chan struct{} {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH)
	out := make(chan struct{}, 1)
	go func() {
		defer signal.Stop(sig)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sig:
				select {
				case out <- struct{}{}:
				default: // a redraw is already due
				}
			}
		}
	}()
	return out
}

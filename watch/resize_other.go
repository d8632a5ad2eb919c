//go:build !unix

package watch

import "context"

// NotifyResize returns nil where there is no SIGWINCH: the screen is then
// redrawn at the next tick at the new size.
func NotifyResize(ctx context.Context) <-chan struct{} { return nil }

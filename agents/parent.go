package agents

import (
	"context"
	"os"
	"time"
)

// ParentPollInterval is how often WatchParent looks at the parent process.
const ParentPollInterval = 250 * time.Millisecond

// WatchParent returns a context that ends when the process that started
// this one goes away: a host killed outright (SIGKILL, OOM, a crash) sends
// its hook no signal, and the hook is handed to init (or a subreaper), so
// its parent process id changes. The hook then withdraws its approval as if
// it had been cancelled, so nobody approves a call that will never run.
// Polling getppid works on every Unix; a hook started by init itself (ppid
// 1) cannot tell and is not watched.
func WatchParent(ctx context.Context, every time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	ppid := os.Getppid()
	if ppid <= 1 {
		return ctx, cancel
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if os.Getppid() != ppid {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}

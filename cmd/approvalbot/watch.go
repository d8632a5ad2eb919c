package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"approvalbot/api"
	"approvalbot/watch"

	"golang.org/x/term"
)

const watchUsage = `usage: approvalbot watch [--by NAME] [--guard DURATION]

Shows every pending approval of the daemon at $APPROVALBOT_URL (default ` + defaultURL + `,
token $APPROVALBOT_TOKEN) in a box, oldest first, and sends the decision
made at the keyboard:

  1            approve once
  2            Always: shows the pattern(s); ←/→ picks this session or this agent; Enter saves
  3            Deny: type a reason, Enter denies
  ↑/↓ Enter    move and confirm
  a letter     starts a deny reason (and selects Deny)
  Backspace    edit the reason; Esc clears it
  s            Stop: deny and stop the agent's turn (while no reason is typed
               and Deny is not selected; otherwise s is part of the reason)
  PgUp/PgDn    scroll a long command
  Ctrl+C       leave without deciding

Keys typed before a box appeared never answer it. No colour when stdout is
not a terminal or NO_COLOR is set.
`

func runWatch(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { fmt.Fprint(e.stderr, watchUsage) }
	by := fs.String("by", defaultDecider(e), "who decides, as the daemon records it")
	guard := fs.Duration("guard", watch.DefaultGuard, "how long a new box ignores keys")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "approvalbot watch: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	if *guard < 0 || *guard > 10*time.Second {
		fmt.Fprintf(e.stderr, "approvalbot watch: --guard must be between 0 and 10s, not %s\n", *guard)
		return exitUsage
	}
	in, inOK := e.stdin.(*os.File)
	out, outOK := e.stdout.(*os.File)
	if !inOK || !outOK {
		fmt.Fprintln(e.stderr, "approvalbot watch: needs a terminal")
		return exitFailure
	}
	tty, err := watch.OpenTerminal(in, out)
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot watch: needs a terminal: %v\n", err)
		return exitFailure
	}
	defer tty.Restore()

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err = watch.Run(rctx, watch.Config{
		Client:     approverClientFromEnv(e, api.WithVia("watch")),
		By:         *by,
		In:         in,
		Out:        out,
		Size:       tty.Size,
		Resize:     watch.NotifyResize(rctx),
		Flush:      tty.Flush,
		Style:      watch.Style{Color: watch.ColorEnabled(out, e.getenv)},
		FullScreen: term.IsTerminal(int(out.Fd())),
		Guard:      max(*guard, time.Nanosecond), // 0 would mean the default
	})
	if err != nil {
		tty.Restore()
		fmt.Fprintf(e.stderr, "approvalbot watch: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// defaultDecider names the person at this terminal.
func defaultDecider(e *env) string {
	for _, k := range []string{"USER", "LOGNAME"} {
		if u := e.getenv(k); u != "" {
			return u + " (terminal)"
		}
	}
	return "terminal"
}

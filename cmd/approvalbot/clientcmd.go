package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"approvalbot/api"
	"approvalbot/config"
	"approvalbot/prompt"
)

// clientTimeout bounds one request of a client command (none of them waits
// for a person).
const clientTimeout = 30 * time.Second

// clientFromEnv returns a client for the daemon at $APPROVALBOT_URL with
// $APPROVALBOT_TOKEN. Agents' adapters (hook, mcp) use it: they never read
// the approver token.
func clientFromEnv(e *env, opts ...api.Option) *api.Client {
	return api.NewClient(daemonURL(e), e.getenv("APPROVALBOT_TOKEN"), opts...)
}

// approverClientFromEnv returns a client for the commands a person runs to
// decide and manage (approve, deny, rules, mode, watch, audit, pending):
// with $APPROVALBOT_TOKEN, else with the approver token `serve` keeps in
// its data dir (found as serve finds it: $APPROVALBOT_DATA_DIR, else
// ~/.local/share/approvalbot), so on the daemon's machine, as its user,
// they need no setup. Without either, the daemon answers 401 and
// clientFailed says what to set.
func approverClientFromEnv(e *env, opts ...api.Option) *api.Client {
	tok := e.getenv("APPROVALBOT_TOKEN")
	if tok == "" {
		if dir, err := config.DataDir(e.getenv); err == nil {
			tok, _ = config.ReadApproverToken(dir, false)
		}
	}
	return api.NewClient(daemonURL(e), tok, opts...)
}

func daemonURL(e *env) string {
	if u := e.getenv("APPROVALBOT_URL"); u != "" {
		return u
	}
	return defaultURL
}

// clientFailed reports err from talking to the daemon and returns the exit code.
func clientFailed(e *env, name string, c *api.Client, err error) int {
	var ae *api.Error
	switch {
	case errors.Is(err, api.ErrUnreachable):
		fmt.Fprintf(e.stderr, "approvalbot %s: cannot reach the daemon at %s: is `approvalbot serve` running there? (set APPROVALBOT_URL)\n  %v\n", name, c.BaseURL(), err)
	case errors.As(err, &ae) && ae.Status == http.StatusUnauthorized:
		fmt.Fprintf(e.stderr, "approvalbot %s: the daemon at %s needs the approver credential: set APPROVALBOT_TOKEN to an admin token, "+
			"or run this as the daemon's user on its machine with the same APPROVALBOT_DATA_DIR (it reads DATA_DIR/%s)\n", name, c.BaseURL(), config.ApproverTokenFile)
	case errors.As(err, &ae) && ae.Status == http.StatusForbidden:
		fmt.Fprintf(e.stderr, "approvalbot %s: not allowed with this token (%s): it needs an admin token\n", name, ae.Message)
	case errors.As(err, &ae):
		fmt.Fprintf(e.stderr, "approvalbot %s: %s\n", name, prompt.VisibleLine(ae.Message))
	default:
		fmt.Fprintf(e.stderr, "approvalbot %s: %v\n", name, err)
	}
	return exitFailure
}

// newFlags returns a flag set for a client command that writes to stderr.
func newFlags(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: approvalbot %s\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments
// (`approve ID --always`), and returns the positional ones. ok is false
// when the command should exit with code (usage error, or -h).
func parseFlags(e *env, fs *flag.FlagSet, args []string, npos int) (pos []string, code int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if npos >= 0 && len(pos) != npos {
		fmt.Fprintf(e.stderr, "approvalbot %s: want %d argument(s), got %d\n", fs.Name(), npos, len(pos))
		fs.Usage()
		return nil, exitUsage, false
	}
	return pos, exitOK, true
}

// defaultBy names the person deciding from this terminal as watch does:
// "$USER (cli)", else "cli".
func defaultBy(e *env) string {
	user := e.getenv("USER")
	if user == "" {
		return "cli"
	}
	return user + " (cli)"
}

// cell makes agent-controlled text safe and short for one table cell.
func cell(s string, max int) string {
	s = prompt.VisibleLine(s)
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// printJSON writes v indented.
func printJSON(e *env, v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ago phrases how long ago t was, coarsely.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return shortDuration(now.Sub(t))
}

// shortDuration is d rounded to what a person reads at a glance: 42s, 5m, 3h, 2d.
func shortDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + shortDuration(-d)
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"approvalbot/config"
)

// doctorTimeout bounds each remote check, so doctor never hangs on a
// network that drops packets.
const doctorTimeout = 10 * time.Second

// check is one doctor finding.
type check struct {
	name string
	ok   bool
	msg  string // what was found
	fix  string // what to do, when not ok
}

func runDoctor(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	health := fs.Bool("health", false, "only check that the daemon at APPROVALBOT_URL is healthy (for container health checks)")
	project := fs.String("project", "", "check the agents' project settings and folder trust in `DIR` (default: the current directory)")
	fs.Usage = func() {
		fmt.Fprintln(e.stdout, "usage: approvalbot doctor [--health] [--project DIR]\n\nChecks the settings, the rules file, the data dir, the chat frontends, each agent's hook and the daemon, each with a fix.")
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil || fs.NArg() > 0 {
		fmt.Fprintln(e.stderr, "usage: approvalbot doctor [--health] [--project DIR]")
		return exitUsage
	}
	if *health {
		return healthOnly(ctx, e)
	}
	if *project == "" {
		*project, _ = os.Getwd()
	} else if abs, err := filepath.Abs(*project); err == nil {
		*project = abs
	}
	checks := doctor(ctx, e, *project)
	failed := 0
	for _, c := range checks {
		mark := "ok  "
		if !c.ok {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(e.stdout, "[%s] %s: %s\n", mark, c.name, c.msg)
		if !c.ok && c.fix != "" {
			fmt.Fprintf(e.stdout, "       fix: %s\n", c.fix)
		}
	}
	if failed > 0 {
		fmt.Fprintf(e.stdout, "%d problem(s) found\n", failed)
		return exitFailure
	}
	fmt.Fprintln(e.stdout, "all checks passed")
	return exitOK
}

func healthOnly(ctx context.Context, e *env) int {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	h, err := clientFromEnv(e).Health(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "unhealthy: %v\n", err)
		return exitFailure
	}
	if !h.OK {
		fmt.Fprintf(e.stderr, "unhealthy: %s\n", h.RulesError)
		return exitFailure
	}
	fmt.Fprintf(e.stdout, "healthy, %d pending\n", h.Pending)
	return exitOK
}

// doctor runs every check and returns the findings in order; project is
// the folder whose agent settings and trust are checked.
func doctor(ctx context.Context, e *env, project string) []check {
	var out []check
	s, err := config.Load()
	if err != nil {
		return append(out, check{name: "settings", msg: err.Error(),
			fix: "correct the APPROVALBOT_* variable named above (see README.md, Settings)"})
	}
	out = append(out, check{name: "settings", ok: true, msg: "APPROVALBOT_* variables parse and are consistent"})

	home, _ := os.UserHomeDir()
	if _, err := loadPolicy(s, home); err != nil {
		out = append(out, check{name: "rules", msg: err.Error(),
			fix: "fix the rules file at the line named above, or unset APPROVALBOT_RULES to use the defaults"})
	} else {
		out = append(out, check{name: "rules", ok: true, msg: rulesName(s) + " compiles"})
		for _, w := range rulesWarnings(s, home) {
			// Warnings do not fail the check: the rules do what they say.
			out = append(out, check{name: "rules lint", ok: true, msg: "warning: " + w.String()})
		}
	}
	out = append(out, checkDataDir(s.DataDir))

	out = append(out, checkFrontends(ctx, s)...)
	out = append(out, checkAgents(e, project)...)

	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c := clientFromEnv(e)
	h, err := c.Health(hctx)
	switch {
	case err != nil:
		out = append(out, check{name: "daemon", msg: fmt.Sprintf("%s: %v", c.BaseURL(), err),
			fix: "start it with `approvalbot serve`, or set APPROVALBOT_URL (and APPROVALBOT_TOKEN) to where it runs"})
	case !h.OK && h.StoreError != "":
		out = append(out, check{name: "daemon", msg: "unhealthy: " + h.StoreError, fix: "free disk space or make the data dir writable again; the daemon recovers by itself"})
	case !h.OK:
		out = append(out, check{name: "daemon", msg: "unhealthy: " + h.RulesError, fix: "fix the rules file; the daemon reloads it"})
	default:
		out = append(out, check{name: "daemon", ok: true, msg: fmt.Sprintf("%s is healthy, %d pending", c.BaseURL(), h.Pending)})
	}
	return out
}

func checkDataDir(dir string) check {
	c := check{name: "data dir"}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		c.ok, c.msg = true, dir+" does not exist yet; serve creates it"
		return c
	case err != nil:
		c.msg, c.fix = err.Error(), "make "+dir+" accessible to this user or set APPROVALBOT_DATA_DIR"
		return c
	case !fi.IsDir():
		c.msg, c.fix = dir+" is not a directory", "set APPROVALBOT_DATA_DIR to a directory"
		return c
	}
	probe, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		c.msg, c.fix = dir+" is not writable: "+err.Error(), "chown/chmod it for this user, or set APPROVALBOT_DATA_DIR"
		return c
	}
	probe.Close()
	os.Remove(probe.Name())
	if fi.Mode().Perm()&0o077 != 0 {
		c.msg, c.fix = fmt.Sprintf("%s is readable by others (%v)", dir, fi.Mode().Perm()), "chmod 700 "+dir
		return c
	}
	c.ok, c.msg = true, dir+" is writable"
	if _, err := os.Stat(filepath.Join(dir, "approvalbot.db")); err == nil {
		c.msg += " and holds approvalbot.db"
	}
	return c
}

package main

import (
	"context"
	"fmt"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// runMode is `approvalbot mode AGENT [interactive|strict|approve_all]`:
// print or set an agent's mode.
func runMode(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "mode", "mode AGENT [interactive|strict|approve_all]")
	pos, code, ok := parseFlags(e, fs, args, -1)
	if !ok {
		return code
	}
	if len(pos) < 1 || len(pos) > 2 || pos[0] == "" {
		fs.Usage()
		return exitUsage
	}
	agent := pos[0]
	c := approverClientFromEnv(e)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	if len(pos) == 1 {
		m, err := c.Mode(ctx, agent)
		if err != nil {
			return clientFailed(e, "mode", c, err)
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", prompt.VisibleLine(agent), m)
		return exitOK
	}
	m := gate.Mode(pos[1])
	if !m.Valid() {
		fmt.Fprintf(e.stderr, "approvalbot mode: bad mode %q: want interactive, strict or approve_all\n", pos[1])
		return exitUsage
	}
	if err := c.SetMode(ctx, agent, m); err != nil {
		return clientFailed(e, "mode", c, err)
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", prompt.VisibleLine(agent), m)
	return exitOK
}

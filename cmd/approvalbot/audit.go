package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"approvalbot/api"
	"approvalbot/gate"
)

// auditPage is how many entries each request fetches.
const auditPage = 1000

// runAudit is `approvalbot audit [--verify] [--json] [--after N]`.
func runAudit(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "audit", "audit [--verify] [--json] [--after N] [--limit N]")
	verify := fs.Bool("verify", false, "check the hash chain instead of listing")
	asJSON := fs.Bool("json", false, "print entries as JSON lines")
	after := fs.Uint64("after", 0, "only entries with a sequence number above N")
	limit := fs.Int("limit", 0, "at most N entries (0: all)")
	if _, code, ok := parseFlags(e, fs, args, 0); !ok {
		return code
	}
	if *limit < 0 {
		fmt.Fprintln(e.stderr, "approvalbot audit: --limit must not be negative")
		return exitUsage
	}
	c := approverClientFromEnv(e)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	if *verify {
		n, err := c.VerifyAudit(ctx)
		if errors.Is(err, api.ErrAuditBroken) {
			fmt.Fprintf(e.stderr, "approvalbot audit: the audit chain does NOT verify (%d entries): %v\n", n, err)
			return exitFailure
		}
		if err != nil {
			return clientFailed(e, "audit", c, err)
		}
		fmt.Fprintf(e.stdout, "audit chain OK: %d entries\n", n)
		return exitOK
	}

	var tw *tabwriter.Writer
	var enc *json.Encoder
	if *asJSON {
		enc = json.NewEncoder(e.stdout)
	} else {
		tw = tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SEQ\tTIME\tEVENT\tAPPROVAL\tAGENT\tTOOL\tSTATUS\tBY\tDETAIL")
	}
	seq, printed := *after, 0
	for *limit == 0 || printed < *limit {
		page := auditPage
		if *limit > 0 {
			page = min(page, *limit-printed)
		}
		entries, err := c.Audit(ctx, seq, page)
		if err != nil {
			return clientFailed(e, "audit", c, err)
		}
		for _, en := range entries {
			if enc != nil {
				if err := enc.Encode(en); err != nil {
					return exitFailure
				}
			} else {
				printAuditEntry(tw, en)
			}
			seq = en.Seq
		}
		printed += len(entries)
		if len(entries) < page {
			break
		}
	}
	if tw != nil {
		if err := tw.Flush(); err != nil {
			return exitFailure
		}
	}
	return exitOK
}

func printAuditEntry(tw *tabwriter.Writer, en gate.AuditEntry) {
	status := string(en.Status)
	if en.Decision != "" {
		status += "/" + string(en.Decision)
	}
	fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", en.Seq, en.Time.UTC().Format("2006-01-02 15:04:05"),
		cell(en.Event, 16), cell(en.ApprovalID, 40), cell(en.Agent, 20), cell(en.Tool, 24), cell(status, 24),
		cell(en.By, 24), cell(en.Detail, 60))
}

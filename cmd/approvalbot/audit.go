package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"approvalbot/api"
	"approvalbot/gate"
)

// auditPage is how many entries each request fetches.
const auditPage = 1000

// runAudit is `approvalbot audit [--verify] [--json] [--after N] [--limit N]
// [--agent A] [--since D] [--decision D] [--by B]`.
func runAudit(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "audit", "audit [--verify [--db FILE]] [--json] [--after N] [--limit N] [--agent A] [--since 1h|TIME] [--decision allow|deny|STATUS] [--by NAME]")
	verify := fs.Bool("verify", false, "check the hash chain instead of listing")
	db := fs.String("db", "", "with --verify: check this database file (a backup copy) directly, read-only, without a daemon")
	keyFile := fs.String("key", "", "with --db: the audit key file (default: DATA_DIR/audit.key)")
	asJSON := fs.Bool("json", false, "print entries as JSON lines")
	after := fs.Uint64("after", 0, "only entries with a sequence number above N")
	limit := fs.Int("limit", 0, "at most N entries printed (0: all)")
	var f auditFilter
	fs.StringVar(&f.agent, "agent", "", "only this agent's entries")
	since := fs.String("since", "", "only entries since a duration ago (90m, 24h) or a time (RFC 3339)")
	fs.StringVar(&f.decision, "decision", "", "only decisions: allow, deny, or a status (approved, denied, expired, ...)")
	fs.StringVar(&f.by, "by", "", "only entries decided by a person, rule, Always rule or mode whose name contains this")
	if _, code, ok := parseFlags(e, fs, args, 0); !ok {
		return code
	}
	if *since != "" {
		t, err := parseSince(*since, time.Now())
		if err != nil {
			fmt.Fprintf(e.stderr, "approvalbot audit: bad --since %q: want a duration (90m, 24h) or an RFC 3339 time\n", *since)
			return exitUsage
		}
		f.since = t
	}
	if *limit < 0 {
		fmt.Fprintln(e.stderr, "approvalbot audit: --limit must not be negative")
		return exitUsage
	}
	if *db != "" {
		if !*verify {
			fmt.Fprintln(e.stderr, "approvalbot audit: --db goes with --verify")
			return exitUsage
		}
		kp := *keyFile
		if kp == "" {
			kp = auditKeyPath(e)
		}
		n, keyed, err := verifyCopy(ctx, *db, kp)
		if err != nil {
			fmt.Fprintf(e.stderr, "approvalbot audit: %s does NOT verify: %v\n", *db, err)
			return exitFailure
		}
		fmt.Fprintf(e.stdout, "audit chain OK: %d entries (%s, %s)\n", n, *db, keyedNote(keyed))
		return exitOK
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
		fmt.Fprintln(tw, "SEQ\tTIME\tEVENT\tAPPROVAL\tAGENT\tTOOL\tSTATUS\tDECIDED BY\tDETAIL")
	}
	seq, printed := *after, 0
	for *limit == 0 || printed < *limit {
		entries, err := c.Audit(ctx, seq, auditPage)
		if err != nil {
			return clientFailed(e, "audit", c, err)
		}
		for _, en := range entries {
			seq = en.Seq
			if !f.match(en) || *limit > 0 && printed >= *limit {
				continue
			}
			printed++
			if enc != nil {
				kind, which := en.Decider()
				if err := enc.Encode(auditJSON{AuditEntry: en, DeciderKind: kind, Decider: which}); err != nil {
					return exitFailure
				}
			} else {
				printAuditEntry(tw, en)
			}
		}
		if len(entries) < auditPage {
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
		cell(deciderText(en), 40), cell(en.Detail, 60))
}

// auditJSON is an audit entry as --json prints it: with what decided.
type auditJSON struct {
	gate.AuditEntry
	DeciderKind string `json:"decider_kind,omitempty"` // person, rule, always, mode, memory, timeout, agent, expiry
	Decider     string `json:"decider,omitempty"`      // which one: a name, a rule, a pattern, a mode
}

// deciderText is "person ana", "rule rules.jsonc:3 Bash: ls *", "mode strict", ...
func deciderText(en gate.AuditEntry) string {
	kind, which := en.Decider()
	return strings.TrimSpace(kind + " " + which)
}

// auditFilter selects audit entries.
type auditFilter struct {
	agent, decision, by string
	since               time.Time
}

func (f auditFilter) match(en gate.AuditEntry) bool {
	switch {
	case f.agent != "" && en.Agent != f.agent:
		return false
	case !f.since.IsZero() && en.Time.Before(f.since):
		return false
	case f.decision != "" && string(en.Decision) != f.decision && string(en.Status) != f.decision:
		return false
	case f.decision != "" && en.Decision == "":
		return false
	case f.by != "" && !strings.Contains(strings.ToLower(deciderText(en)), strings.ToLower(f.by)):
		return false
	}
	return true
}

// parseSince reads --since: a duration before now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Parse(time.RFC3339, s)
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"approvalbot/api"
	"approvalbot/gate"
	"approvalbot/prompt"
)

// runPending is `approvalbot pending [--json]`: the approvals waiting for a person.
// With --json it prints {"approvals": [...]}, each object exactly as
// GET /v1/approvals?status=pending answers it (every page), so scripts
// see the API's fields (decision, rules, judged, ...) and no others.
func runPending(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "pending", "pending [--json]")
	asJSON := fs.Bool("json", false, `print {"approvals": [...]} as the API's GET /v1/approvals?status=pending has them`)
	if _, code, ok := parseFlags(e, fs, args, 0); !ok {
		return code
	}
	var pages *pageRecorder
	var opts []api.Option
	if *asJSON {
		pages = &pageRecorder{next: http.DefaultTransport}
		opts = append(opts, api.WithHTTPClient(&http.Client{Transport: pages}))
	}
	c := approverClientFromEnv(e, opts...)
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	list, err := c.List(ctx, gate.StatusPending)
	if err != nil {
		return clientFailed(e, "pending", c, err)
	}
	if *asJSON {
		raw, err := pages.approvals()
		if err != nil {
			fmt.Fprintf(e.stderr, "approvalbot pending: %v\n", err)
			return exitFailure
		}
		if err := printJSON(e, struct {
			Approvals []json.RawMessage `json:"approvals"`
		}{raw}); err != nil {
			return exitFailure
		}
		return exitOK
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "no pending approvals")
		return exitOK
	}
	now := time.Now()
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGE\tAGENT\tTOOL\tCOMMAND\tRISKS\tASKED BY\tDEADLINE")
	for _, a := range list {
		// The same labels and rule every frontend shows (prompt.Build).
		c := prompt.Build(a, now)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\tin %s\n", cell(a.ID, 40), ago(a.CreatedAt, now), cell(a.Agent, 20),
			cell(a.Tool, 24), cell(summary(a), 60), cell(orDash(strings.Join(c.Risks, "; ")), 60),
			cell(orDash(c.AskedBy), 40), shortDuration(a.Deadline.Sub(now)))
	}
	if err := tw.Flush(); err != nil {
		return exitFailure
	}
	return exitOK
}

// summary is the part of a call a person recognises it by: the command
// line or the paths the gate judged, else the raw input itself (never a
// reading of it here: the gate decoded it once, with exact keys).
func summary(a *gate.Approval) string {
	if j := a.Judged; j != nil {
		switch {
		case j.Command != "":
			return j.Command
		case len(j.Paths) > 0:
			return strings.Join(j.Paths, ", ")
		}
	}
	if len(a.Input) == 0 {
		return "-"
	}
	return string(a.Input)
}

// orDash is s, or "-" for an empty cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// pageRecorder keeps the body of every successful list page the client
// reads (GET .../v1/approvals), so --json can print the API's objects as
// they came instead of re-encoding what the client decoded. The client
// still does the paging, the credential and the error messages.
type pageRecorder struct {
	next http.RoundTripper

	mu    sync.Mutex
	pages [][]byte
}

func (r *pageRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil || resp.StatusCode/100 != 2 || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/v1/approvals") {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", req.URL.Path, err)
	}
	r.mu.Lock()
	r.pages = append(r.pages, body)
	r.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// approvals are the approval objects of every recorded page, in order.
func (r *pageRecorder) approvals() ([]json.RawMessage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []json.RawMessage{}
	for _, p := range r.pages {
		var page struct {
			Approvals []json.RawMessage `json:"approvals"`
		}
		if err := json.Unmarshal(p, &page); err != nil {
			return nil, fmt.Errorf("the daemon's list answer is not JSON: %w", err)
		}
		out = append(out, page.Approvals...)
	}
	return out, nil
}

package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"approvalbot/gate"
)

// Client talks to an approvalbot daemon over the HTTP API v1. It is safe for
// concurrent use. Transport failures are returned wrapping ErrUnreachable;
// error answers as *Error.
type Client struct {
	base  string
	token string
	hc    *http.Client
	// pollWait is the ?wait= of each long-poll in SubmitAndWait.
	pollWait time.Duration
	// via names the surface decisions come from ("cli" by default).
	via string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client use hc. It must not have a Timeout shorter
// than the long-polls the caller asks for; contexts bound every request.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithPollWait sets how long each long-poll of SubmitAndWait waits (default 60s).
func WithPollWait(d time.Duration) Option { return func(c *Client) { c.pollWait = d } }

// WithVia sets the surface the client's decisions are recorded as coming
// from ("cli" by default; `approvalbot watch` says "watch").
func WithVia(via string) Option { return func(c *Client) { c.via = via } }

// maxErrorBody bounds how much of an error answer the client reads.
const maxErrorBody = 4 << 20

// NewClient returns a client for the daemon at baseURL
// ("http://127.0.0.1:8754"), sending token as a bearer token when set.
func NewClient(baseURL, token string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), token: token, pollWait: time.Minute, via: "cli"}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Agents submit concurrently; keep their connections alive.
		t.MaxIdleConnsPerHost = 64
		c.hc = &http.Client{Transport: t}
	}
	return c
}

// BaseURL returns the daemon's address, for messages.
func (c *Client) BaseURL() string { return c.base }

// request sends one request and returns the response for a 2xx answer.
func (c *Client) request(ctx context.Context, method, path string, q url.Values, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
		return nil, fmt.Errorf("%w at %s: %s %s: %v", ErrUnreachable, c.base, method, path, unwrapURLError(err))
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	return resp, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// do sends a request and decodes a 2xx answer into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body, out any) error {
	resp, err := c.request(ctx, method, path, q, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
		return fmt.Errorf("%w at %s: %s %s: read answer: %v", ErrUnreachable, c.base, method, path, err)
	}
	return nil
}

func decodeError(resp *http.Response) error {
	e := &Error{Status: resp.StatusCode, Message: http.StatusText(resp.StatusCode)}
	var body struct {
		Error    string        `json:"error"`
		Code     string        `json:"code"`
		Approval *approvalJSON `json:"approval"`
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if json.Unmarshal(data, &body) == nil && body.Error != "" {
		e.Message, e.Code, e.Approval = body.Error, body.Code, body.Approval.approval()
	}
	return e
}

func (c *Client) approval(ctx context.Context, method, path string, q url.Values, body any) (*gate.Approval, error) {
	var j approvalJSON
	if err := c.do(ctx, method, path, q, body, &j); err != nil {
		return nil, err
	}
	a := j.approval()
	if a == nil {
		return nil, fmt.Errorf("%s %s: empty answer", method, path)
	}
	return a, nil
}

func waitQuery(wait time.Duration) url.Values {
	if wait <= 0 {
		return nil
	}
	return url.Values{"wait": {wait.String()}}
}

// Submit posts a call and waits up to wait (capped by the server) for it to
// be final; the answer may still be pending.
func (c *Client) Submit(ctx context.Context, call gate.Call, wait time.Duration) (*gate.Approval, error) {
	return c.approval(ctx, http.MethodPost, "/v1/calls", waitQuery(wait), callRequest{
		Agent: call.Agent, SessionID: call.SessionID, Tool: call.Tool, Input: call.Input,
		Cwd: call.Cwd, IdempotencyKey: call.IdempotencyKey, Deferred: call.Deferred,
	})
}

// Backoff bounds for SubmitAndWait's retries.
const (
	minRetry = 100 * time.Millisecond
	maxRetry = 2 * time.Second
)

// SubmitAndWait posts the call and waits until its approval is final or ctx
// ends (then ctx's error, with the approval as last seen).
//
// It first submits without waiting, to learn the approval's id at once,
// then long-polls the approval by id. Only while no request has reached the
// daemon (nothing was ever written on a connection to it) does it give up,
// after connectGrace, with an error wrapping ErrUnreachable, so a hook fails
// closed quickly when no daemon runs. Once a request was sent, a lost
// connection means the daemon restarted or crashed with the call possibly
// stored: it retries with capped backoff until ctx ends, re-posting the
// same call (the same idempotency key, or the same body from which the
// server derives one) until it knows the id, then long-polling by id, which
// is durable across restarts and never makes a second prompt.
func (c *Client) SubmitAndWait(ctx context.Context, call gate.Call, connectGrace time.Duration) (*gate.Approval, error) {
	start := time.Now()
	var sent atomic.Bool
	tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				sent.Store(true)
			}
		},
	})
	backoff := minRetry
	var last *gate.Approval
	for {
		var a *gate.Approval
		var err error
		if last == nil {
			a, err = c.Submit(tctx, call, 0)
		} else {
			a, err = c.Get(tctx, last.ID, c.pollWait)
			if errors.Is(err, gate.ErrNotFound) {
				// The daemon lost it (should not happen): re-attach by key.
				last = nil
				continue
			}
		}
		if err == nil {
			backoff = minRetry
			if a.Status.Final() {
				return a, nil
			}
			last = a
			continue
		}
		if ctx.Err() != nil {
			return last, fmt.Errorf("wait for approval: %w", ctx.Err())
		}
		if !retryable(err) {
			return last, err
		}
		if !sent.Load() && time.Since(start)+backoff > connectGrace {
			if errors.Is(err, ErrUnreachable) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return last, fmt.Errorf("wait for approval: %w", ctx.Err())
		case <-t.C:
		}
		backoff = min(backoff*2, maxRetry)
	}
}

// retryable reports whether an error may go away by itself: the daemon is
// unreachable, restarting (503) or behind a failing proxy (502, 504).
func retryable(err error) bool {
	if errors.Is(err, ErrUnreachable) {
		return true
	}
	var ae *Error
	if errors.As(err, &ae) {
		switch ae.Status {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
	}
	return false
}

// Get returns the approval with id, waiting up to wait for it to be final.
func (c *Client) Get(ctx context.Context, id string, wait time.Duration) (*gate.Approval, error) {
	return c.approval(ctx, http.MethodGet, "/v1/approvals/"+url.PathEscape(id), waitQuery(wait), nil)
}

// List returns approvals with status ("" for all), following the server's
// pages to the end.
func (c *Client) List(ctx context.Context, status gate.Status) ([]*gate.Approval, error) {
	q := url.Values{"limit": {strconv.Itoa(gate.MaxPageSize)}}
	if status != "" {
		q.Set("status", string(status))
	}
	var out []*gate.Approval
	for {
		var body approvalsBody
		if err := c.do(ctx, http.MethodGet, "/v1/approvals", q, nil, &body); err != nil {
			return nil, err
		}
		for _, j := range body.Approvals {
			if a := j.approval(); a != nil {
				out = append(out, a)
			}
		}
		if body.NextCursor == "" {
			return out, nil
		}
		q.Set("cursor", body.NextCursor)
	}
}

// Approve approves approval id once, or with always its Always pattern(s)
// in scope ("" for the server's default, agent).
func (c *Client) Approve(ctx context.Context, id string, always bool, scope gate.Scope, by string) (*gate.Approval, error) {
	return c.approval(ctx, http.MethodPost, "/v1/approvals/"+url.PathEscape(id)+"/approve", nil,
		approveRequest{Always: always, Scope: scope, By: by, Via: c.via})
}

// Deny denies approval id with reason; stop also asks the agent to stop its turn.
func (c *Client) Deny(ctx context.Context, id, reason string, stop bool, by string) (*gate.Approval, error) {
	return c.approval(ctx, http.MethodPost, "/v1/approvals/"+url.PathEscape(id)+"/deny", nil,
		denyRequest{Reason: reason, Stop: stop, By: by, Via: c.via})
}

// Cancel closes a pending approval because its agent went away.
func (c *Client) Cancel(ctx context.Context, id, reason string) (*gate.Approval, error) {
	return c.approval(ctx, http.MethodPost, "/v1/approvals/"+url.PathEscape(id)+"/cancel", nil,
		cancelRequest{Reason: reason})
}

// Rules lists the Always rules of agent ("" for all).
func (c *Client) Rules(ctx context.Context, agent string) ([]gate.AlwaysRule, error) {
	var q url.Values
	if agent != "" {
		q = url.Values{"agent": {agent}}
	}
	var body rulesBody
	if err := c.do(ctx, http.MethodGet, "/v1/rules", q, nil, &body); err != nil {
		return nil, err
	}
	return body.Rules, nil
}

// AddRule adds an Always rule (its ID, CreatedAt and CreatedBy are ignored
// and assigned by the server) and returns it as stored.
func (c *Client) AddRule(ctx context.Context, r gate.AlwaysRule) (gate.AlwaysRule, error) {
	var out gate.AlwaysRule
	err := c.do(ctx, http.MethodPost, "/v1/rules", nil, ruleRequest{
		Agent: r.Agent, Tool: r.Tool, Pattern: r.Pattern, Scope: r.Scope,
		SessionID: r.SessionID, ExpiresAt: r.ExpiresAt,
	}, &out)
	return out, err
}

// DeleteRule removes the Always rule with id.
func (c *Client) DeleteRule(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/rules/"+url.PathEscape(id), nil, nil, nil)
}

// SetMode sets an agent's mode.
func (c *Client) SetMode(ctx context.Context, agent string, m gate.Mode) error {
	return c.do(ctx, http.MethodPut, "/v1/agents/"+url.PathEscape(agent)+"/mode", nil, modeBody{Mode: m}, nil)
}

// Mode returns an agent's mode.
func (c *Client) Mode(ctx context.Context, agent string) (gate.Mode, error) {
	var body modeBody
	if err := c.do(ctx, http.MethodGet, "/v1/agents/"+url.PathEscape(agent)+"/mode", nil, nil, &body); err != nil {
		return "", err
	}
	return body.Mode, nil
}

// Audit returns audit entries with Seq > after, at most limit (0: the
// server's page size, 1000).
func (c *Client) Audit(ctx context.Context, after uint64, limit int) ([]gate.AuditEntry, error) {
	q := url.Values{}
	if after > 0 {
		q.Set("after", strconv.FormatUint(after, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var body auditBody
	if err := c.do(ctx, http.MethodGet, "/v1/audit", q, nil, &body); err != nil {
		return nil, err
	}
	return body.Entries, nil
}

// ErrAuditBroken is returned by VerifyAudit when the chain does not verify.
var ErrAuditBroken = errors.New("audit chain broken")

// VerifyAudit checks the daemon's audit chain and returns its length; an
// error wrapping ErrAuditBroken names the first broken entry.
func (c *Client) VerifyAudit(ctx context.Context) (int, error) {
	var body verifyBody
	if err := c.do(ctx, http.MethodGet, "/v1/audit/verify", nil, nil, &body); err != nil {
		return 0, err
	}
	if !body.OK {
		return body.Entries, fmt.Errorf("%w: %s", ErrAuditBroken, body.Error)
	}
	return body.Entries, nil
}

// Backup streams a consistent copy of the daemon's database to w.
func (c *Client) Backup(ctx context.Context, w io.Writer) (int64, error) {
	resp, err := c.request(ctx, http.MethodGet, "/v1/backup", nil, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("%w at %s: GET /v1/backup: read: %v", ErrUnreachable, c.base, err)
	}
	return n, nil
}

// Health returns the daemon's health. An unhealthy daemon (503) is not an
// error: its Health comes back with OK false.
func (c *Client) Health(ctx context.Context) (gate.Health, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/healthz", nil)
	if err != nil {
		return gate.Health{}, fmt.Errorf("health: %w", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return gate.Health{}, fmt.Errorf("health: %w", ctx.Err())
		}
		return gate.Health{}, fmt.Errorf("%w at %s: %v", ErrUnreachable, c.base, unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return gate.Health{}, decodeError(resp)
	}
	var h gate.Health
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxErrorBody)).Decode(&h); err != nil {
		return gate.Health{}, fmt.Errorf("health: decode answer (%d): %w", resp.StatusCode, err)
	}
	return h, nil
}

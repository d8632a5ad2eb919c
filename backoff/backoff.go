// Package backoff is the one retry policy of approvalbot's network and
// store retries: capped exponential backoff, and a context-aware sleep.
// Every retry loop (the gate's message-reference writes, the outbox,
// Telegram's getUpdates, Slack's Socket Mode, watch's reconnect) uses it,
// so they all back off the same way and all stop when their context ends.
//
// It imports only the standard library, so the gate may use it.
package backoff

import (
	"context"
	"time"
)

// Policy is a capped exponential backoff: Min after the first failure,
// doubling up to Max.
type Policy struct {
	Min, Max time.Duration
}

// Default is the policy for retries that name no other: 200ms doubling to 10s.
var Default = Policy{Min: 200 * time.Millisecond, Max: 10 * time.Second}

// Delay is the wait before retry number attempt (0 for the first retry).
// A zero Min means no wait; a zero Max means no cap.
func (p Policy) Delay(attempt int) time.Duration {
	d := p.Min
	for range attempt {
		if d *= 2; p.Max > 0 && d >= p.Max {
			return p.Max
		}
		if d <= 0 {
			return p.Max
		}
	}
	if p.Max > 0 && d > p.Max {
		return p.Max
	}
	return d
}

// Sleep waits d, or until ctx ends (then it returns ctx's error). A d of
// zero or less returns at once, with ctx's error if it has ended.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Retry calls f until it returns nil, stop(err) says to give up, or ctx
// ends, waiting p.Delay between attempts. onErr, if not nil, hears of each
// failure with the wait before the next try. It returns f's last error (or
// ctx's, if ctx ended first and f never succeeded).
func Retry(ctx context.Context, p Policy, f func(ctx context.Context) error, stop func(error) bool, onErr func(err error, wait time.Duration)) error {
	for attempt := 0; ; attempt++ {
		err := f(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || (stop != nil && stop(err)) {
			return err
		}
		wait := p.Delay(attempt)
		if onErr != nil {
			onErr(err, wait)
		}
		if Sleep(ctx, wait) != nil {
			return err
		}
	}
}

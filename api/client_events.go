package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"approvalbot/gate"
)

// maxEventLine bounds one SSE line: an approval with a tool input of the
// server's maximum body size, escaped, fits well within it.
const maxEventLine = 16 << 20

// Events streams the daemon's events to fn: first every pending approval as
// approval_required, then live events. It returns when ctx ends (ctx's
// error), fn returns an error (that error), or the stream breaks (an error
// wrapping ErrUnreachable, or an *Error for an error answer). Callers
// reconnect; each connection replays the pending approvals again.
func (c *Client) Events(ctx context.Context, fn func(gate.Event) error) error {
	resp, err := c.request(ctx, http.MethodGet, "/v1/events", nil, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	err = readSSE(resp.Body, fn)
	if ctx.Err() != nil {
		return fmt.Errorf("events: %w", ctx.Err())
	}
	return err
}

// readSSE parses a text/event-stream (the subset the server writes: event,
// data, comments) and calls fn per event.
func readSSE(r io.Reader, fn func(gate.Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var typ string
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() == 0 {
				typ = ""
				continue
			}
			var j approvalJSON
			if err := json.Unmarshal([]byte(data.String()), &j); err != nil {
				return fmt.Errorf("events: decode %s event: %w", typ, err)
			}
			if typ == "" {
				typ = "message"
			}
			ev := gate.Event{Type: typ, Approval: j.approval()}
			typ = ""
			data.Reset()
			if err := fn(ev); err != nil {
				return err
			}
		case strings.HasPrefix(line, ":"):
			// comment (heartbeat)
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				typ = value
			case "data":
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.WriteString(value)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: events stream: %v", ErrUnreachable, err)
	}
	return fmt.Errorf("%w: events stream ended", ErrUnreachable)
}

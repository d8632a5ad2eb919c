package api

import (
	"approvalbot/gate"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// handleEvents is GET /v1/events: Server-Sent Events, one per gate event
// ("event: approval_required|approval_resolved", "data:" the approval JSON),
// the pending approvals replayed first (the gate's Subscribe does that), and
// a comment every heartbeat so proxies and clients see a live stream. It
// ends when the client goes away or the gate drops the subscription (the
// client reconnects and gets a fresh replay).
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request, _ principal) error {
	rc := http.NewResponseController(w)
	// A server WriteTimeout would cut the stream; dead clients are found by
	// the heartbeat writes failing instead.
	_ = rc.SetWriteDeadline(time.Time{})
	ctx := r.Context()
	ch := s.svc.Subscribe(ctx)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return nil // the connection cannot stream; nothing more to say on it
	}

	tick := time.NewTicker(s.heartbeat)
	defer tick.Stop()
	var buf bytes.Buffer
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-ch:
			if !ok {
				return nil
			}
			// Events already waiting (a replay) go out in one write and
			// one flush, not a syscall each.
			buf.Reset()
			s.encodeEvent(&buf, ev)
			more := true
		drain:
			for buf.Len() < sseBatchBytes {
				select {
				case ev, ok := <-ch:
					if !ok {
						more = false
						break drain
					}
					s.encodeEvent(&buf, ev)
				default:
					break drain
				}
			}
			if _, err := w.Write(buf.Bytes()); err != nil {
				return nil
			}
			if !more {
				_ = rc.Flush()
				return nil
			}
		case <-tick.C:
			if _, err := io.WriteString(w, ": ping\n\n"); err != nil {
				return nil
			}
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
	}
}

// sseBatchBytes bounds the events written with one flush.
const sseBatchBytes = 64 << 10

// encodeEvent appends ev to buf; an event that cannot be encoded is logged
// and skipped, and the stream goes on.
func (s *Server) encodeEvent(buf *bytes.Buffer, ev gate.Event) {
	if err := writeSSE(buf, ev.Type, toJSON(ev.Approval)); err != nil {
		s.logger.Error("api: encode event", "type", ev.Type, "err", err)
	}
}

// writeSSE writes one event. JSON from encoding/json has no raw newlines,
// so the data fits on one "data:" line.
func writeSSE(w *bytes.Buffer, typ string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
	return nil
}

// Package slacktest is a fake Slack for tests of the Slack frontend (and of
// `approvalbot doctor`). It builds on slack-go's slacktest server and adds
// what that lacks: chat.update, chat.postEphemeral and views.open that
// record what they got, a 429 injector, and a Socket Mode endpoint
// (apps.connections.open returning a websocket URL on the same server) that
// says hello, sends interactive, slash-command and Events API envelopes
// (thread replies for replies in words), reads acks and can drop the
// connection.
package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack/slacktest"
)

// Message is a message the fake holds, as last posted or updated.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	Blocks   string // the blocks JSON as sent
	Updates  int    // how many chat.update calls changed it
}

// Ephemeral is a chat.postEphemeral call.
type Ephemeral struct {
	Channel, User, Text, Blocks string
}

// View is a views.open call.
type View struct {
	TriggerID string
	View      json.RawMessage
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	inner *slacktest.Server

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every change
	seq        int
	messages   []*Message
	ephemerals []Ephemeral
	views      []View
	limits     map[string][]int    // method -> Retry-After seconds of the next 429s
	failures   map[string][]string // method -> Slack error codes of the next calls
	calls      map[string]int
	conn       *websocket.Conn
	conns      int // websocket connections accepted so far
	envSeq     int
	acks       map[string]json.RawMessage
}

// New starts a fake Slack; it stops when the test ends.
func New(t interface{ Cleanup(func()) }) *Server {
	s := &Server{changed: make(chan struct{}), limits: map[string][]int{}, failures: map[string][]string{}, calls: map[string]int{}, acks: map[string]json.RawMessage{}}
	s.inner = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/chat.postMessage", s.limited("chat.postMessage", s.postMessage))
		c.Handle("/chat.update", s.limited("chat.update", s.update))
		c.Handle("/chat.postEphemeral", s.limited("chat.postEphemeral", s.postEphemeral))
		c.Handle("/views.open", s.limited("views.open", s.viewsOpen))
		c.Handle("/apps.connections.open", s.limited("apps.connections.open", s.connectionsOpen))
		c.Handle("/socket", s.socket)
		c.Handle("/auth.test", s.limited("auth.test", s.authTest))
		c.Handle("/conversations.info", s.limited("conversations.info", s.conversationsInfo))
	})
	s.inner.Start()
	t.Cleanup(func() {
		s.DropConnection()
		s.inner.Stop()
	})
	return s
}

// APIURL is the Web API root to give the client (ends in a slash).
func (s *Server) APIURL() string { return s.inner.GetAPIURL() }

// changedLocked wakes everyone waiting in Await.
func (s *Server) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Await waits until cond holds for a snapshot of what the fake has seen,
// checking again after every change.
func (s *Server) Await(ctx context.Context, cond func(Snapshot) bool) error {
	for {
		s.mu.Lock()
		snap := s.snapshotLocked()
		ch := s.changed
		s.mu.Unlock()
		if cond(snap) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("fake slack: condition not met: %w", ctx.Err())
		}
	}
}

// Snapshot is a copy of what the fake has seen.
type Snapshot struct {
	Messages    []Message
	Ephemerals  []Ephemeral
	Views       []View
	Calls       map[string]int // successful and rate-limited calls by method
	Connections int
	Open        bool // a websocket is connected
	Acks        map[string]json.RawMessage
}

// Snapshot returns a copy of what the fake has seen.
func (s *Server) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked()
}

func (s *Server) snapshotLocked() Snapshot {
	snap := Snapshot{Calls: map[string]int{}, Connections: s.conns, Open: s.conn != nil, Acks: map[string]json.RawMessage{}}
	for _, m := range s.messages {
		snap.Messages = append(snap.Messages, *m)
	}
	snap.Ephemerals = append(snap.Ephemerals, s.ephemerals...)
	snap.Views = append(snap.Views, s.views...)
	for k, v := range s.calls {
		snap.Calls[k] = v
	}
	for k, v := range s.acks {
		snap.Acks[k] = v
	}
	return snap
}

// RateLimit makes the next calls of method fail with 429 and the given
// Retry-After seconds, one call per value.
func (s *Server) RateLimit(method string, retryAfter ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits[method] = append(s.limits[method], retryAfter...)
}

// Fail makes the next calls of method answer ok:false with the given
// Slack error codes ("invalid_auth", "channel_not_found"), one per call.
func (s *Server) Fail(method string, codes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[method] = append(s.failures[method], codes...)
}

func (s *Server) limited(method string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls[method]++
		if q := s.failures[method]; len(q) > 0 {
			s.failures[method] = q[1:]
			s.changedLocked()
			s.mu.Unlock()
			fail(w, q[0])
			return
		}
		if q := s.limits[method]; len(q) > 0 {
			s.limits[method] = q[1:]
			s.changedLocked()
			s.mu.Unlock()
			w.Header().Set("Retry-After", strconv.Itoa(q[0]))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		s.mu.Unlock()
		next(w, r)
	}
}

func reply(w http.ResponseWriter, v map[string]any) {
	v["ok"] = true
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": code})
}

// authTest answers auth.test for any token; make it refuse one with
// Fail("auth.test", "invalid_auth").
func (s *Server) authTest(w http.ResponseWriter, r *http.Request) {
	reply(w, map[string]any{"url": "https://fake.slack.com/", "team": "Fake Team", "user": "approvalbot",
		"team_id": "T0FAKE", "user_id": "U0BOT", "bot_id": "B0BOT"})
}

// conversationsInfo answers conversations.info: the bot is a member of every
// channel whose id starts with "C", and of no other.
func (s *Server) conversationsInfo(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.FormValue("channel") == "" {
		fail(w, "channel_not_found")
		return
	}
	ch := r.FormValue("channel")
	reply(w, map[string]any{"channel": map[string]any{"id": ch, "name": "approvals", "is_member": strings.HasPrefix(ch, "C")}})
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.FormValue("channel") == "" {
		fail(w, "channel_not_found")
		return
	}
	s.mu.Lock()
	s.seq++
	m := &Message{Channel: r.FormValue("channel"), TS: fmt.Sprintf("1700000000.%06d", s.seq),
		ThreadTS: r.FormValue("thread_ts"), Text: r.FormValue("text"), Blocks: r.FormValue("blocks")}
	s.messages = append(s.messages, m)
	s.changedLocked()
	s.mu.Unlock()
	reply(w, map[string]any{"channel": m.Channel, "ts": m.TS})
}

func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		fail(w, "invalid_form_data")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.messages {
		if m.Channel == r.FormValue("channel") && m.TS == r.FormValue("ts") {
			m.Text, m.Blocks = r.FormValue("text"), r.FormValue("blocks")
			m.Updates++
			s.changedLocked()
			reply(w, map[string]any{"channel": m.Channel, "ts": m.TS, "text": m.Text})
			return
		}
	}
	fail(w, "message_not_found")
}

func (s *Server) postEphemeral(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.FormValue("user") == "" {
		fail(w, "user_not_in_channel")
		return
	}
	s.mu.Lock()
	s.ephemerals = append(s.ephemerals, Ephemeral{Channel: r.FormValue("channel"), User: r.FormValue("user"),
		Text: r.FormValue("text"), Blocks: r.FormValue("blocks")})
	s.changedLocked()
	s.mu.Unlock()
	reply(w, map[string]any{"message_ts": "1700000000.999999"})
}

func (s *Server) viewsOpen(w http.ResponseWriter, r *http.Request) {
	var req struct {
		TriggerID string          `json:"trigger_id"`
		View      json.RawMessage `json:"view"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.TriggerID == "" {
		fail(w, "invalid_trigger_id")
		return
	}
	s.mu.Lock()
	s.views = append(s.views, View{TriggerID: req.TriggerID, View: req.View})
	s.changedLocked()
	s.mu.Unlock()
	reply(w, map[string]any{"view": map[string]any{"id": "V1"}})
}

func (s *Server) connectionsOpen(w http.ResponseWriter, r *http.Request) {
	reply(w, map[string]any{"url": "ws://" + r.Host + "/socket"})
}

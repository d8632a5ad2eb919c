package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gorilla/websocket"
)

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// socket serves one Socket Mode websocket: hello first, then envelopes sent
// with Send*, while reading the client's acks.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	hello := `{"type":"hello","num_connections":1,"connection_info":{"app_id":"A0FAKE"},"debug_info":{"host":"fake"}}`
	if err := conn.WriteMessage(websocket.TextMessage, []byte(hello)); err != nil {
		conn.Close()
		return
	}
	s.mu.Lock()
	if s.conn != nil {
		s.conn.Close()
	}
	s.conn = conn
	s.conns++
	s.changedLocked()
	s.mu.Unlock()

	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			break
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		if len(ack.Payload) == 0 {
			ack.Payload = json.RawMessage("null")
		}
		s.mu.Lock()
		s.acks[ack.EnvelopeID] = ack.Payload
		s.changedLocked()
		s.mu.Unlock()
	}
	s.mu.Lock()
	if s.conn == conn {
		s.conn = nil
		s.changedLocked()
	}
	s.mu.Unlock()
	conn.Close()
}

// DropConnection closes the current Socket Mode websocket abruptly, as a
// network failure would.
func (s *Server) DropConnection() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.UnderlyingConn().Close()
		s.conn = nil
		s.changedLocked()
	}
}

// ErrNoConnection is returned when an envelope is sent with no client connected.
var ErrNoConnection = errors.New("fake slack: no socket mode connection")

// SendInteractive sends an interactive envelope with payload (a block_actions
// or view_submission callback) and returns its envelope id.
func (s *Server) SendInteractive(payload any) (string, error) {
	return s.send("interactive", payload)
}

// SendSlashCommand sends a slash_commands envelope and returns its envelope id.
func (s *Server) SendSlashCommand(payload any) (string, error) {
	return s.send("slash_commands", payload)
}

// SendEvent sends an events_api envelope whose payload is the Events API
// callback carrying event (a message event, say) and returns its envelope id.
func (s *Server) SendEvent(event any) (string, error) {
	return s.send("events_api", EventCallback(event))
}

// EventCallback is the Events API's outer event_callback carrying event, as
// Slack posts it over HTTP and in a Socket Mode envelope.
func EventCallback(event any) map[string]any {
	return map[string]any{"type": "event_callback", "token": "unused", "team_id": "T0FAKE", "api_app_id": "A0FAKE",
		"event_id": "Ev0FAKE", "event_time": 1700000000, "event": event}
}

// ThreadReply is a message event of user replying text in the thread of
// the message at channel/threadTS, as Slack sends it to a bot subscribed
// to message.channels.
func ThreadReply(channel, threadTS, user, text string) map[string]any {
	return map[string]any{"type": "message", "channel": channel, "channel_type": "channel", "user": user,
		"text": text, "ts": "1700000999.000100", "thread_ts": threadTS, "event_ts": "1700000999.000100"}
}

func (s *Server) send(typ string, payload any) (string, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("marshal %s payload: %w", typ, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return "", ErrNoConnection
	}
	s.envSeq++
	id := fmt.Sprintf("env-%d", s.envSeq)
	env, _ := json.Marshal(map[string]any{"type": typ, "envelope_id": id, "payload": json.RawMessage(raw), "accepts_response_payload": true})
	if err := s.conn.WriteMessage(websocket.TextMessage, env); err != nil {
		return "", fmt.Errorf("write envelope: %w", err)
	}
	return id, nil
}

// AwaitAck waits for the ack of envelope id and returns its payload ("null"
// for an empty ack).
func (s *Server) AwaitAck(ctx context.Context, id string) (json.RawMessage, error) {
	var got json.RawMessage
	err := s.Await(ctx, func(snap Snapshot) bool {
		p, ok := snap.Acks[id]
		got = p
		return ok
	})
	return got, err
}

// AwaitConnections waits until n websocket connections have been accepted
// and one is open.
func (s *Server) AwaitConnections(ctx context.Context, n int) error {
	return s.Await(ctx, func(snap Snapshot) bool { return snap.Connections >= n && snap.Open })
}

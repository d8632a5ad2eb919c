package api

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Connection limits serve puts on its listener and http.Server. They hold
// the daemon up for agents when some client (a bug, an abuser on the same
// machine) opens connections and never finishes with them.
const (
	// DefaultMaxConns caps open connections. Beyond it a new connection
	// gets a 503 and is closed at once, rather than waiting unseen in the
	// kernel's backlog; well under the common 1024 descriptors, so bbolt
	// and the chat frontends always have theirs.
	DefaultMaxConns = 512
	// DefaultIdleTimeout closes keep-alive connections idle this long.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultBodyTimeout bounds reading one request body.
	DefaultBodyTimeout = 30 * time.Second
)

// tooBusy is written, raw, to a connection over the cap.
const tooBusy = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 66\r\n\r\n" +
	`{"error":"too many connections to approvalbot","code":"too_many"}` + "\n"

// LimitListener returns ln with at most max connections open at once. A
// connection over the cap is answered 503 (when plain is set; a TLS
// listener's is closed without a word) and closed, and Accept goes on.
func LimitListener(ln net.Listener, max int, plain bool) net.Listener {
	return &limitListener{Listener: ln, max: max, plain: plain}
}

type limitListener struct {
	net.Listener
	max   int
	plain bool
	mu    sync.Mutex
	open  int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		over := l.open >= l.max
		if !over {
			l.open++
		}
		l.mu.Unlock()
		if !over {
			return &limitConn{Conn: c, l: l}, nil
		}
		go refuse(c, l.plain)
	}
}

// refuse answers and closes a connection over the cap, without holding
// up Accept for a client that does not read.
func refuse(c net.Conn, plain bool) {
	defer c.Close()
	if plain {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = io.WriteString(c, tooBusy)
	}
}

type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// BodyDeadline bounds the time to read a request's body to d: a client
// that sends its body slowly, or stops, is cut off. The deadline is lifted
// once the body is read, so a long-poll that follows it (POST /v1/calls
// ?wait=) is not cut; an http.Server ReadTimeout would cut it.
func BodyDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if err := rc.SetReadDeadline(time.Now().Add(d)); err == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline when the body ends.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		var ne net.Error
		if !(errors.As(err, &ne) && ne.Timeout()) {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	}
	return n, err
}

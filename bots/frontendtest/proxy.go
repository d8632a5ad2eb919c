package frontendtest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Proxy stands between a frontend and its platform's emulator and does to
// chosen requests what the emulator cannot: hold one until the test lets
// it go (so work queues behind it without timing anything), or drop the
// connection (a transport error, whose message carries the request's URL
// and so any token in it).
type Proxy struct {
	*httptest.Server

	mu        sync.Mutex
	hold      *held
	drops     map[string]int // path suffix -> connections still to drop
	target    *url.URL
	exchanges []Exchange
}

// Exchange is one request the emulator answered through the proxy.
type Exchange struct {
	Path        string
	ContentType string
	Request     []byte // the request body
	Status      int
	Response    []byte // the response body
}

// Exchanges returns the requests whose path ends in suffix that the
// emulator answered, in the order they were answered: what the frontend
// sent, as sent (the emulator keeps only the latest state of a message).
func (p *Proxy) Exchanges(suffix string) []Exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Exchange
	for _, e := range p.exchanges {
		if strings.HasSuffix(e.Path, suffix) {
			out = append(out, e)
		}
	}
	return out
}

type held struct {
	suffix  string
	arrived chan struct{}
	release chan struct{}
}

// NewProxy starts a proxy to the emulator at target; it is closed when
// the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("frontendtest: proxy target %q: %v", target, err)
	}
	p := &Proxy{target: &url.URL{Scheme: u.Scheme, Host: u.Host}, drops: map[string]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

// Hold makes the next request whose path ends in suffix wait until
// release is called; held is closed when it has arrived.
func (p *Proxy) Hold(suffix string) (heldc <-chan struct{}, release func()) {
	h := &held{suffix: suffix, arrived: make(chan struct{}), release: make(chan struct{})}
	p.mu.Lock()
	p.hold = h
	p.mu.Unlock()
	return h.arrived, sync.OnceFunc(func() { close(h.release) })
}

// Drop makes the next n requests whose path ends in suffix fail with a
// dropped connection.
func (p *Proxy) Drop(suffix string, n int) {
	p.mu.Lock()
	p.drops[suffix] += n
	p.mu.Unlock()
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	var h *held
	if p.hold != nil && strings.HasSuffix(r.URL.Path, p.hold.suffix) {
		h, p.hold = p.hold, nil
	}
	drop := false
	for suffix, n := range p.drops {
		if n > 0 && strings.HasSuffix(r.URL.Path, suffix) {
			p.drops[suffix] = n - 1
			drop = true
			break
		}
	}
	p.mu.Unlock()
	if drop {
		panic(http.ErrAbortHandler) // the client sees the connection close
	}
	if h != nil {
		close(h.arrived)
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rp := httputil.NewSingleHostReverseProxy(p.target)
	direct := rp.Director
	rp.Director = func(r *http.Request) {
		direct(r)
		r.Host = p.target.Host // URLs the emulator hands out point at itself
	}
	rp.ModifyResponse = func(resp *http.Response) error {
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(out))
		p.mu.Lock()
		p.exchanges = append(p.exchanges, Exchange{Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"),
			Request: body, Status: resp.StatusCode, Response: out})
		p.mu.Unlock()
		return err
	}
	rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) }
	rp.ServeHTTP(w, r)
}

// LogBuffer collects a frontend's log output; safe for concurrent use.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

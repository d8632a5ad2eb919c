package telegram

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"approvalbot/gate/gatetest"
)

// holdingProxy stands between the bot and the emulator and can hold one
// sendMessage until the test lets it go, so a test can queue work behind
// a prompt being sent without timing anything.
type holdingProxy struct {
	*httptest.Server
	mu      sync.Mutex
	target  *url.URL
	armed   bool
	held    chan struct{} // closed when the armed request arrives
	release chan struct{} // closed by the test to let it through
}

func newHoldingProxy(t *testing.T) *holdingProxy {
	p := &holdingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		hold := p.armed && strings.HasSuffix(r.URL.Path, "/sendMessage")
		var held, release chan struct{}
		if hold {
			p.armed = false
			held, release = p.held, p.release
		}
		target := p.target
		p.mu.Unlock()
		if hold {
			close(held)
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		rp := httputil.NewSingleHostReverseProxy(target)
		rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) }
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// arm makes the next sendMessage wait for the returned release function;
// held is closed once that request has arrived.
func (p *holdingProxy) arm() (held <-chan struct{}, release func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = true
	p.held, p.release = make(chan struct{}), make(chan struct{})
	return p.held, sync.OnceFunc(func() { close(p.release) })
}

// TestStrangerFloodNeverDelaysPrompts is the red team's F-10 on the
// emulator and the real gate: while a prompt is being sent, a user who is
// not an approver sends 25 commands in the bound group (/pending ×5, /mode
// ×20) and 25 other users send /pair from another chat; then a new call
// asks. Counted on the emulator: the new prompt is sent before any reply;
// the flooder gets one reply (the rest are ignored); the other chat gets
// at most maxStrangerReplies; /pending is one message.
func TestStrangerFloodNeverDelaysPrompts(t *testing.T) {
	proxy := newHoldingProxy(t)
	h := newHarnessWith(t, gatetest.Options{}, func(c *Config) { c.APIURL = proxy.URL })
	target, _ := url.Parse(h.srv.URL)
	proxy.mu.Lock()
	proxy.target = target
	proxy.mu.Unlock()
	h.run()
	ctx := h.ctx()

	held, release := proxy.arm()
	defer release()
	first := h.add("make one")
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the first prompt was never sent")
	}

	var last int
	for i := range 25 {
		text := "/mode claude strict"
		if i%5 == 0 {
			text = "/pending"
		}
		last = h.srv.SendText(testChat, eve, text, 0).UpdateID
	}
	const otherChat = int64(999)
	for i := range 25 {
		last = h.srv.SendText(otherChat, strangerN(100+i), "/pair WRONGCODE", 0).UpdateID
	}
	gatetest.Eventually(t, "every flood message handled", func() bool { return h.value(keyOffset) == itoa(last+1) })

	second := h.add("terraform destroy")
	release()
	h.env.Shown(t, first.ID, Name)
	h.env.Shown(t, second.ID, Name)
	gatetest.Eventually(t, "the reply queue drained", func() bool {
		h.bot.replies.mu.Lock()
		defer h.bot.replies.mu.Unlock()
		return !h.bot.replies.running
	})

	var order []string
	replies := 0
	for _, m := range h.srv.Messages(testChat) {
		p := plain(t, m)
		switch {
		case strings.Contains(p, "ID: "+first.ID):
			order = append(order, "first")
		case strings.Contains(p, "ID: "+second.ID):
			order = append(order, "second")
		default:
			order = append(order, "reply")
			replies++
		}
	}
	if strings.Join(order, ",") != "first,second,reply" {
		t.Errorf("send order in the group: %v, want the prompts first and one reply", order)
	}
	if n := len(h.srv.Messages(otherChat)); n > maxStrangerReplies {
		t.Errorf("%d replies in the other chat, want at most %d", n, maxStrangerReplies)
	}
	// The one reply is the flooder's first command: /pending, one message.
	for _, m := range h.srv.Messages(testChat) {
		if !strings.Contains(m.Text, "ID: ") && !strings.Contains(m.Text, "pending") {
			t.Errorf("reply %q is not the /pending list", m.Text)
		}
	}
	t.Logf("group: %v; other chat: %d replies to 25 /pair", order, len(h.srv.Messages(otherChat)))
}

package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalbot/api"
	"approvalbot/bots/frontendtest"
	"approvalbot/gate/gatetest"
	"approvalbot/prompt"
)

// TestContract runs the frontend contract (bots/frontendtest) against
// watch: the real API server over the suite's gate, and one watch
// terminal per person, each holding its own credential. A person in
// Setup.Approvers holds an approver (admin) token; anyone else holds an
// agent token of the calls' own agent, which the API refuses for the event
// stream and for decisions (403): that is how watch refuses a stranger.
func TestContract(t *testing.T) {
	frontendtest.Run(t, func(t *testing.T) frontendtest.Driver {
		d := &contractDriver{logs: &frontendtest.LogBuffer{}, terms: map[frontendtest.User]*terminal{}, summaries: map[string]string{}}
		d.srv = httptest.NewServer(http.HandlerFunc(d.serve))
		t.Cleanup(d.srv.Close)
		return d
	})
}

// The terminals' size, and their credentials.
const (
	contractWidth, contractHeight = 120, 40
	contractAgent                 = "claude" // the agent of gatetest's calls
)

var contractTokens = map[frontendtest.User]string{
	frontendtest.Approver: "adm-contract-SECRET-approver",
	frontendtest.Stranger: "agt-contract-SECRET-stranger",
}

// contractDriver serves the API on one listener for the whole case: a
// daemon restart swaps the server behind it (the terminals keep running
// and reconnect, as they do when the real daemon restarts).
type contractDriver struct {
	srv       *httptest.Server
	logs      *frontendtest.LogBuffer
	terms     map[frontendtest.User]*terminal
	summaries map[string]string // approval id -> its line in the log

	mu        sync.Mutex
	api       http.Handler // nil while the daemon is down
	env       *gatetest.Env
	approvers []frontendtest.User
	limited   int  // event subscriptions still to refuse with 429
	drops     int  // then, to drop
	tamper    bool // alter the digest of the next decision
	noDigest  bool // a decision to tamper with carried none
}

func (d *contractDriver) Name() string             { return "watch" }
func (d *contractDriver) Skips() map[string]string { return nil }
func (d *contractDriver) ScrollMarker() string     { return "more line(s) below (PgDn)" }
func (d *contractDriver) Secrets() []string {
	return []string{contractTokens[frontendtest.Approver], contractTokens[frontendtest.Stranger]}
}

// Logs: the daemon's log, and every screen either terminal drew.
func (d *contractDriver) Logs() string {
	var b strings.Builder
	b.WriteString(d.logs.String())
	for _, tm := range d.terms {
		tm.mu.Lock()
		for _, s := range tm.screens {
			b.WriteString(s.raw)
		}
		tm.mu.Unlock()
	}
	return b.String()
}

// Hold: a terminal shows one approval at a time; later ones wait behind it.
func (d *contractDriver) Hold(*testing.T) (<-chan struct{}, func()) {
	held := make(chan struct{})
	close(held)
	return held, func() {}
}

func (d *contractDriver) Start(t *testing.T, s frontendtest.Setup) {
	cfg := api.Config{AdminTokens: map[string]string{}, AgentTokens: map[string]string{}}
	for who, tok := range contractTokens {
		if slices.Contains(s.Approvers, who) {
			cfg.AdminTokens[tok] = string(who)
		} else {
			cfg.AgentTokens[tok] = contractAgent
		}
	}
	srv := api.NewServer(cfg, s.Env.G, slog.New(slog.NewTextHandler(d.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	d.mu.Lock()
	d.api, d.env, d.approvers = srv, s.Env, s.Approvers
	d.limited += s.RateLimit
	d.drops += s.Drops
	d.mu.Unlock()
	for who, tok := range contractTokens {
		if d.terms[who] == nil {
			d.terms[who] = startTerminal(t, d.srv.URL, tok, string(who))
		}
	}
}

// Stop takes the daemon down: every request fails as on a closed port.
func (d *contractDriver) Stop(*testing.T) {
	d.mu.Lock()
	d.api = nil
	d.mu.Unlock()
	d.srv.CloseClientConnections()
}

// serve stands in front of the API server: it refuses or drops event
// subscriptions (how watch fetches prompts) as Setup asks, and alters the
// digest of a decision a Press tampers with.
func (d *contractDriver) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	h := d.api
	limited, drop := false, false
	if r.URL.Path == "/v1/events" {
		switch {
		case d.limited > 0:
			d.limited--
			limited = true
		case d.drops > 0:
			d.drops--
			drop = true
		}
	}
	decision := strings.HasSuffix(r.URL.Path, "/approve") || strings.HasSuffix(r.URL.Path, "/deny")
	tamper := d.tamper && decision
	if tamper {
		d.tamper = false
	}
	d.mu.Unlock()
	if h == nil || drop {
		panic(http.ErrAbortHandler) // the client sees the connection close
	}
	if limited {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":"rate limited","code":"too_many"}`)
		return
	}
	if tamper {
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		if json.Unmarshal(raw, &body) != nil || body["digest"] == nil || body["digest"] == "" {
			d.mu.Lock()
			d.noDigest = true
			d.mu.Unlock()
		} else {
			body["digest"] = frontendtest.Tamper(body["digest"].(string))
			raw, _ = json.Marshal(body)
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	}
	h.ServeHTTP(w, r)
}

// Prompts: the approver's terminal, frame by frame: the box while it shows
// id, then the line of the log that says how it ended.
func (d *contractDriver) Prompts(t *testing.T, id string) []frontendtest.Prompt {
	tm := d.terms[frontendtest.Approver]
	if tm == nil {
		return nil
	}
	sum := d.summary(id)
	tm.mu.Lock()
	defer tm.mu.Unlock()
	var out []frontendtest.Prompt
	for i, s := range tm.screens {
		v := frontendtest.Prompt{Message: "box", Raw: i}
		if s.shows(id) {
			v.Text, v.Choices = s.text(), s.choices
			v.Live = len(v.Choices) > 0
		} else if e := s.entry(sum); e != "" {
			v.Text = e
		} else {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Text == v.Text && out[n-1].Live == v.Live {
			continue
		}
		out = append(out, v)
	}
	return out
}

// summary is the text the log ends id's line with, once id is known.
func (d *contractDriver) summary(id string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.summaries[id]; ok || d.env == nil {
		return s
	}
	a, err := d.env.G.Get(context.Background(), id)
	if err != nil {
		return ""
	}
	d.summaries[id] = " — " + summary(a)
	return d.summaries[id]
}

// contractKeys are the keys of each choice, typed after the selection is
// back on "1 Approve once" with no reason and no note.
var contractKeys = map[prompt.ChoiceKind]string{
	prompt.ChoiceApprove: "1",
	prompt.ChoiceDeny:    "3\r",
	prompt.ChoiceStop:    "s",
}

const (
	keyReset = "\x1b" + "\x1b[A\x1b[A\x1b[A\x1b[A" // Esc (the reason, the note), then ↑ to the first choice
	keyRight = "\x1b[C"
	keyPgDn  = "\x1b[6~"
)

// notConnected is watch's note for a key typed while the stream is down.
const notConnected = "not connected to the daemon"

// Press types p's choice on p.As's terminal, and waits until the approval
// is decided or the terminal shows a note in answer (which it is then). An
// approver whose key met a broken stream (the emulated 429s and drops cut
// it; watch shows "connected" once it has listed, before the stream fails)
// types it again once connected, as a person would.
func (d *contractDriver) Press(t *testing.T, p frontendtest.Press) frontendtest.Answer {
	t.Helper()
	frontendtest.Target(t, d, p) // the version pressed is the box shown now
	d.mu.Lock()
	approver := slices.Contains(d.approvers, p.As)
	d.mu.Unlock()
	for range 20 {
		ans := d.press(t, p, approver)
		if !approver || !strings.HasPrefix(ans.Text, notConnected) {
			return ans
		}
	}
	t.Fatalf("%s's terminal never stayed connected long enough to press on %s", p.As, p.ID)
	return frontendtest.Answer{}
}

func (d *contractDriver) press(t *testing.T, p frontendtest.Press, approver bool) frontendtest.Answer {
	t.Helper()
	tm := d.terms[p.As]
	keys, ok := contractKeys[p.Choice.Kind]
	if p.Choice.Kind == prompt.ChoiceAlways {
		i := slices.IndexFunc(prompt.AlwaysChoices, func(c prompt.ScopeChoice) bool { return c.Key == p.Choice.Scope })
		keys, ok = "2"+strings.Repeat(keyRight, i)+"\r", i >= 0
	}
	if !ok {
		t.Fatalf("no keys for %s%s", p.Choice.Kind, p.Choice.Scope)
	}
	tm.wait(t, p.ID+" ready for keys", func(s *screen) bool {
		return s.shows(p.ID) && s.hint != "sending the decision…" && (!approver || s.connected())
	})
	tm.typeKeys(t, keyReset)
	tm.wait(t, p.ID+" with the first choice selected and no note", func(s *screen) bool {
		return s.shows(p.ID) && s.selected == "1 Approve once" && len(s.status) == 0
	})
	d.mu.Lock()
	d.tamper, d.noDigest = p.Tamper, false
	d.mu.Unlock()
	tm.typeKeys(t, keys)
	var ans frontendtest.Answer
	gatetest.Eventually(t, "an answer to "+string(p.As)+" pressing "+keys, func() bool {
		if s := tm.newest(); s != nil && s.shows(p.ID) && len(s.status) > 0 {
			ans.Text = strings.Join(s.status, "\n")
			return true
		}
		d.mu.Lock()
		env := d.env
		d.mu.Unlock()
		a, err := env.G.Get(context.Background(), p.ID)
		return err == nil && a.Status.Final()
	})
	d.mu.Lock()
	if d.noDigest {
		t.Errorf("watch sent a decision on %s without a digest: it is not bound to what was shown", p.ID)
	}
	d.tamper = false
	d.mu.Unlock()
	return ans
}

// Full scrolls the approver's box from top to bottom with PgDn and
// returns its fields and its whole body, rows joined where they wrap.
func (d *contractDriver) Full(t *testing.T, id string) string {
	t.Helper()
	tm := d.terms[frontendtest.Approver]
	tm.wait(t, "the box of "+id, func(s *screen) bool { return s.shows(id) })
	rows := map[int]string{}
	var head []string
	for first := -1; ; {
		var s *screen
		tm.wait(t, "the body of "+id+" scrolled past line "+strconv.Itoa(first), func(x *screen) bool {
			if x.shows(id) && x.above > first {
				s = x
				return true
			}
			return false
		})
		head = s.top
		for i, r := range s.body {
			rows[s.above+i] = r
		}
		if s.below == 0 {
			break
		}
		first = s.above
		tm.typeKeys(t, keyPgDn)
	}
	for i := range len(rows) {
		if _, ok := rows[i]; !ok {
			t.Fatalf("scrolling skipped body row %d of %s (a window shorter than a PgDn step)", i, id)
		}
	}
	inner := BoxWidth(contractWidth) - 4
	var b strings.Builder
	b.WriteString(strings.Join(head, "\n") + "\n")
	for i := range len(rows) {
		r := strings.TrimPrefix(rows[i], "  ")
		b.WriteString(r)
		// A row that fills the body's width was wrapped: the next goes on.
		if textWidth(r) < inner-2 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// terminal is one person's `approvalbot watch`, its screens kept.
type terminal struct {
	in      *io.PipeWriter
	mu      sync.Mutex
	screens []*screen
}

func startTerminal(t *testing.T, url, token, by string) *terminal {
	pr, pw := io.Pipe()
	tm := &terminal{in: pw}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{
			Client: api.NewClient(url, token, api.WithVia("watch")), By: by, In: pr, Out: tm,
			Size:  func() (int, int, error) { return contractWidth, contractHeight, nil },
			Guard: time.Nanosecond, MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		})
	}()
	t.Cleanup(func() {
		cancel()
		pw.Close()
		if err := <-done; err != nil {
			t.Errorf("watch's Run: %v", err)
		}
	})
	return tm
}

// Write takes one frame (Run draws each in one write).
func (tm *terminal) Write(p []byte) (int, error) {
	f := strings.TrimPrefix(string(p), seqHome)
	f = strings.TrimSuffix(f, seqClearLine+seqClearBelow)
	s := parseScreen(plain(strings.ReplaceAll(f, seqClearLine+"\r\n", "\n")))
	tm.mu.Lock()
	tm.screens = append(tm.screens, s)
	tm.mu.Unlock()
	return len(p), nil
}

func (tm *terminal) newest() *screen {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if len(tm.screens) == 0 {
		return nil
	}
	return tm.screens[len(tm.screens)-1]
}

// wait waits until the screen shown now satisfies cond.
func (tm *terminal) wait(t *testing.T, what string, cond func(*screen) bool) {
	t.Helper()
	gatetest.Eventually(t, what, func() bool {
		s := tm.newest()
		return s != nil && cond(s)
	})
}

// typeKeys types keys in one write, which Run reads in one read.
func (tm *terminal) typeKeys(t *testing.T, keys string) {
	t.Helper()
	if _, err := io.WriteString(tm.in, keys); err != nil {
		t.Fatal(err)
	}
}

// screen is one frame, read as a person reads it.
type screen struct {
	raw      string
	header   string
	box      []string // the rows inside the box, right-trimmed
	top      []string // the rows above the body
	id       string   // the ID field of the call shown
	body     []string // the body rows in view, below its label
	above    int      // body rows scrolled out above (0 when not scrolled)
	below    int      // and below
	choices  []prompt.ChoiceKind
	selected string   // the choice marked ›
	hint     string   // the line of keys under the choices
	status   []string // the note under the hint
	recent   []string // the log's entries, their wrapped lines joined
}

var (
	scrollRE = regexp.MustCompile(`^  ([↑↓]) (\d+) more line\(s\) (above|below)`)
	stampRE  = regexp.MustCompile(`^\d\d:\d\d:\d\d [✓✗] `)
)

func parseScreen(raw string) *screen {
	s := &screen{raw: raw}
	lines := strings.Split(raw, "\n")
	s.header = lines[0]
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "╭") {
		i++
	}
	part := 0 // 0 top, 1 body, 2 choices, 3 hint, 4 status
	for i++; i < len(lines) && !strings.HasPrefix(lines[i], "╰"); i++ {
		if strings.HasPrefix(lines[i], "├") {
			part = 2
			continue
		}
		row := strings.TrimRight(strings.TrimSuffix(strings.TrimPrefix(lines[i], "│ "), " │"), " ")
		s.box = append(s.box, row)
		switch {
		case part == 0 && row == "":
			part = 1
		case part == 0:
			s.top = append(s.top, row)
			if v, ok := strings.CutPrefix(row, "ID "); ok {
				s.id = strings.TrimSpace(v)
			}
		case part == 1 && len(s.box) > 0 && s.box[len(s.box)-2] == "":
			// the body's label
		case part == 1:
			if m := scrollRE.FindStringSubmatch(row); m != nil {
				n, _ := strconv.Atoi(m[2])
				if m[1] == "↑" {
					s.above = n
				} else {
					s.below = n
				}
				continue
			}
			s.body = append(s.body, row)
		case part == 2 && row == "":
			part = 3
		case part == 2:
			choice := strings.TrimLeft(row, "› ")
			if strings.HasPrefix(row, "› ") && s.selected == "" {
				s.selected = choice
			}
			switch {
			case strings.HasPrefix(choice, "1 Approve"):
				s.choices = append(s.choices, prompt.ChoiceApprove)
			case strings.HasPrefix(choice, "2 Always: "):
				s.choices = append(s.choices, prompt.ChoiceAlways)
			case strings.HasPrefix(choice, "3 Deny"):
				// Deny takes a typed reason on the same line.
				s.choices = append(s.choices, prompt.ChoiceDeny, prompt.ChoiceDenyReason)
			case strings.HasPrefix(choice, "s Stop"):
				s.choices = append(s.choices, prompt.ChoiceStop)
			}
		case part == 3:
			s.hint, part = row, 4
		default:
			s.status = append(s.status, row)
		}
	}
	i = slices.Index(lines, "Recent:")
	for i++; i > 0 && i < len(lines); i++ {
		switch l := lines[i]; {
		case stampRE.MatchString(l):
			s.recent = append(s.recent, l)
		case len(s.recent) > 0 && strings.HasPrefix(l, "           "):
			s.recent[len(s.recent)-1] += strings.TrimPrefix(l, "           ")
		}
	}
	return s
}

func (s *screen) shows(id string) bool { return s.id == id }

func (s *screen) connected() bool {
	return strings.HasPrefix(s.header, "approvalbot watch · connected")
}

// text is what a person reads: the status line and the box.
func (s *screen) text() string { return s.header + "\n" + strings.Join(s.box, "\n") }

// entry is the log's entry ending in sum, if any.
func (s *screen) entry(sum string) string {
	if sum == "" {
		return ""
	}
	for _, e := range s.recent {
		if strings.HasSuffix(e, sum) {
			return e
		}
	}
	return ""
}

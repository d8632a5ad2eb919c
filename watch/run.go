package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"approvalbot/gate"
)

// Client is what the terminal frontend needs from the daemon's HTTP API;
// *api.Client implements it.
type Client interface {
	// Events streams events until the stream breaks or ctx ends; every
	// pending approval is replayed first as approval_required. fn's error
	// ends the stream.
	Events(ctx context.Context, fn func(gate.Event) error) error
	// List returns the approvals with status, oldest first.
	List(ctx context.Context, status gate.Status) ([]*gate.Approval, error)
	// Decide sends a person's decision on a pending approval, bound to
	// d.Digest, the input the box showed: a call whose input differs gives
	// an error matching gate.ErrDigestMismatch and is not decided. An
	// approval decided first by someone else gives an error matching
	// gate.ErrAlreadyDecided, with the approval as it is when known.
	Decide(ctx context.Context, id string, d gate.Decision) (*gate.Approval, error)
	// DecideBatch decides each of calls, only for the digest it names,
	// with one decision (approve, or deny with reason), and says per call
	// what happened (POST /v1/approvals/batch).
	DecideBatch(ctx context.Context, calls []gate.BatchMember, approve bool, reason string, stop bool, by string) ([]gate.BatchResult, error)
}

// Default timings of the loop.
const (
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 15 * time.Second
	// decisionTimeout bounds one decision request, so a hung daemon cannot
	// leave a box "sending" for ever.
	decisionTimeout = 30 * time.Second
	// readBuf is the size of one read of the terminal.
	readBuf = 256
)

// Config is what Run needs.
type Config struct {
	Client Client
	// By names who decides here, as the daemon records it.
	By string
	// In is the terminal's input, in raw mode. Run reads it in a goroutine
	// that ends when In returns an error (close it to stop it).
	In io.Reader
	// Out is where screens are drawn.
	Out io.Writer
	// Size returns the terminal's width and height; nil or an error means 80x24.
	Size func() (width, height int, err error)
	// Resize tells Run that the terminal changed size (SIGWINCH); may be nil.
	Resize <-chan struct{}
	// Flush discards input the terminal holds but Run has not read; called
	// when a new box is shown. May be nil.
	Flush func()
	// Style is how the screen is drawn.
	Style Style
	// FullScreen switches to the terminal's alternate screen while running
	// and prints the log of what happened when leaving it.
	FullScreen bool
	// Guard, MinBackoff, MaxBackoff: zero means the defaults.
	Guard      time.Duration
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Terminal control sequences the loop writes.
const (
	seqHome       = "\x1b[H"
	seqClearLine  = "\x1b[K"
	seqClearBelow = "\x1b[J"
	seqEnterAlt   = "\x1b[?1049h\x1b[?25l"
	seqLeaveAlt   = "\x1b[?25h\x1b[?1049l"
)

// Run shows pending approvals and sends the decisions made at the keyboard
// until Ctrl+C, the end of the input, or ctx ends. It returns nil then; an
// error only when the terminal cannot be written.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Guard == 0 {
		cfg.Guard = DefaultGuard
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	msgs := make(chan Msg, 64)
	inputDone := make(chan struct{})
	go readKeys(ctx, cfg.In, cfg.Now, msgs, inputDone)
	go connect(ctx, cfg, msgs)

	if cfg.FullScreen {
		if _, err := io.WriteString(cfg.Out, seqEnterAlt); err != nil {
			return fmt.Errorf("write to terminal: %w", err)
		}
	}
	m := NewModel(cfg.Guard)
	d := &drawer{cfg: cfg}
	defer func() {
		if cfg.FullScreen {
			io.WriteString(cfg.Out, seqLeaveAlt)
			for _, l := range m.Log() {
				fmt.Fprintf(cfg.Out, "%s %s\r\n", l.At.Format("15:04:05"), l.Text)
			}
		}
	}()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var guard <-chan time.Time
	for {
		if err := d.draw(m); err != nil {
			return err
		}
		var act Action
		select {
		case <-ctx.Done():
			return nil
		case <-inputDone:
			return nil
		case msg := <-msgs:
			before := m.GuardUntil()
			m, act = Update(m, msg)
			if m.ShownID() != "" && !m.GuardUntil().Equal(before) {
				// A new box, or a grouped view with a new call: drop what
				// was typed for the screen before, and redraw when its
				// keys become live.
				if cfg.Flush != nil {
					cfg.Flush()
				}
				guard = time.After(m.GuardUntil().Sub(cfg.Now()))
			}
		case <-tick.C:
		case <-cfg.Resize:
			d.last = "" // a resized terminal needs the whole screen again
		case <-guard:
			guard = nil
		}
		if act.Quit {
			return nil
		}
		if act.Decide != nil {
			go send(ctx, cfg, *act.Decide, msgs)
		}
	}
}

// drawer writes screens, skipping those identical to the last one.
type drawer struct {
	cfg  Config
	last string
}

func (d *drawer) draw(m Model) error {
	w, h := 80, 24
	if d.cfg.Size != nil {
		if cw, ch, err := d.cfg.Size(); err == nil && cw > 0 && ch > 0 {
			w, h = cw, ch
		}
	}
	screen := Render(m, w, h, d.cfg.Now(), d.cfg.Style)
	if screen == d.last {
		return nil
	}
	d.last = screen
	// Raw mode turns off output processing, so lines end in \r\n; each line
	// clears its old tail, and what is below the screen is cleared.
	frame := seqHome + strings.ReplaceAll(screen, "\n", seqClearLine+"\r\n") + seqClearLine + seqClearBelow
	if _, err := io.WriteString(d.cfg.Out, frame); err != nil {
		return fmt.Errorf("write to terminal: %w", err)
	}
	return nil
}

// readKeys turns the terminal's input into KeyMsgs, each stamped with the
// time it was read (which the model compares with when its box appeared).
func readKeys(ctx context.Context, in io.Reader, now func() time.Time, msgs chan<- Msg, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, readBuf)
	var rest []byte
	for {
		n, err := in.Read(buf)
		if n > 0 {
			at := now()
			var keys []Key
			keys, rest = ParseKeys(append(rest, buf[:n]...))
			for _, k := range keys {
				select {
				case msgs <- KeyMsg{Key: k, At: at}:
				case <-ctx.Done():
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// connect keeps the event stream up: it subscribes, lists what is pending
// (so approvals decided while it was away leave the screen), forwards
// events, and reconnects with exponential backoff when the stream breaks.
func connect(ctx context.Context, cfg Config, msgs chan<- Msg) {
	backoff := cfg.MinBackoff
	post := func(m Msg) bool {
		select {
		case msgs <- m:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for ctx.Err() == nil {
		sctx, stop := context.WithCancel(ctx)
		streamErr := make(chan error, 1)
		go func() {
			streamErr <- cfg.Client.Events(sctx, func(ev gate.Event) error {
				if !post(EventMsg{Event: ev, At: cfg.Now()}) {
					return ctx.Err()
				}
				return nil
			})
		}()
		// Subscribe first, list second: an approval decided in between
		// then arrives as an event, never as a stale box.
		list, err := cfg.Client.List(sctx, gate.StatusPending)
		if err == nil {
			if !post(SyncedMsg{Pending: list, At: cfg.Now()}) {
				stop()
				return
			}
			backoff = cfg.MinBackoff
			err = <-streamErr
			if err == nil {
				err = errors.New("event stream ended")
			}
		} else {
			err = fmt.Errorf("list pending approvals: %w", err)
		}
		stop()
		if ctx.Err() != nil {
			return
		}
		retryAt := cfg.Now().Add(backoff)
		if !post(DisconnectedMsg{Err: err.Error(), RetryAt: retryAt, At: cfg.Now()}) {
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, cfg.MaxBackoff)
	}
}

// send delivers one decision and reports the daemon's answer.
func send(parent context.Context, cfg Config, d Decision, msgs chan<- Msg) {
	ctx, cancel := context.WithTimeout(parent, decisionTimeout)
	defer cancel()
	var a *gate.Approval
	var rs []gate.BatchResult
	var err error
	gd := gate.Decision{By: cfg.By, Digest: d.Digest}
	switch d.Kind {
	case DecideApprove:
		gd.Approve = true
		a, err = cfg.Client.Decide(ctx, d.ID, gd)
	case DecideAlways:
		gd.Approve, gd.Always, gd.Scope, gd.ExpiresAt = true, true, d.Scope, d.ExpiresAt
		a, err = cfg.Client.Decide(ctx, d.ID, gd)
	case DecideDeny:
		gd.Reason = d.Reason
		a, err = cfg.Client.Decide(ctx, d.ID, gd)
	case DecideStop:
		gd.Stop = true
		a, err = cfg.Client.Decide(ctx, d.ID, gd)
	case DecideApproveAll, DecideDenyAll:
		rs, err = cfg.Client.DecideBatch(ctx, d.Members, d.Kind == DecideApproveAll, d.Reason, false, cfg.By)
	default:
		err = fmt.Errorf("unknown decision %q", d.Kind)
	}
	select {
	case msgs <- DecidedMsg{ID: d.ID, Kind: d.Kind, Approval: a, Results: rs, Err: err, At: cfg.Now()}:
	case <-parent.Done(): // the loop is gone; nobody is waiting for the answer
	}
}

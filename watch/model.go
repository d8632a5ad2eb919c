package watch

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// Choice is the selected line of the box.
type Choice int

// The three choices, in the order shown (and numbered 1, 2, 3).
const (
	ChoiceApprove Choice = iota
	ChoiceAlways
	ChoiceDeny
)

// DecisionKind is what a person decided.
type DecisionKind string

// Decision kinds.
const (
	DecideApprove DecisionKind = "approve"
	DecideAlways  DecisionKind = "always"
	DecideDeny    DecisionKind = "deny"
	DecideStop    DecisionKind = "stop"
)

// Decision is a decision the model asks the loop to send.
type Decision struct {
	ID     string
	Kind   DecisionKind
	Scope  gate.Scope // for DecideAlways
	Reason string     // for DecideDeny
}

// Action is what the loop must do after an Update: nothing, send a
// decision, or quit.
type Action struct {
	Decide *Decision
	Quit   bool
}

// Limits of the model.
const (
	// MaxReason bounds a typed deny reason, in runes.
	MaxReason = 500
	// maxLog is how many lines of "what happened" the screen keeps.
	maxLog = 8
	// scrollStep is how many body lines PgUp/PgDn move.
	scrollStep = 10
	// DefaultGuard is how long after a box appears its keys are ignored.
	DefaultGuard = 500 * time.Millisecond
)

// Msg is something that happened, for Update.
type Msg interface{ when() time.Time }

// KeyMsg is a key press, stamped with the time it was read.
type KeyMsg struct {
	Key Key
	At  time.Time
}

// EventMsg is an event from the daemon's stream.
type EventMsg struct {
	Event gate.Event
	At    time.Time
}

// SyncedMsg says the loop (re)connected and lists what is pending now.
type SyncedMsg struct {
	Pending []*gate.Approval
	At      time.Time
}

// DisconnectedMsg says the connection to the daemon is down; the loop
// retries at RetryAt.
type DisconnectedMsg struct {
	Err     string
	RetryAt time.Time
	At      time.Time
}

// DecidedMsg is the daemon's answer to a decision the loop sent.
type DecidedMsg struct {
	ID       string
	Approval *gate.Approval
	Err      error
	At       time.Time
}

func (m KeyMsg) when() time.Time          { return m.At }
func (m EventMsg) when() time.Time        { return m.At }
func (m SyncedMsg) when() time.Time       { return m.At }
func (m DisconnectedMsg) when() time.Time { return m.At }
func (m DecidedMsg) when() time.Time      { return m.At }

type item struct {
	a *gate.Approval
	// confirmed is false for approvals carried over from a connection that
	// broke; the next sync drops those no longer pending.
	confirmed bool
}

// LogLine is one line of what happened to an approval that left the screen.
type LogLine struct {
	At   time.Time
	Text string
	Good bool // approved (shown green), else denied, expired, ...
}

// Model is the state of the terminal frontend. Update never changes a Model
// in place: it returns a new one, so tests can hold on to old states.
type Model struct {
	// Guard is how long after a box appears its keys are ignored.
	Guard time.Duration

	pending   []item // oldest first
	shownID   string
	shownAt   time.Time
	sel       Choice
	scope     gate.Scope
	reason    string
	scroll    int
	sending   string // id of an approval whose decision is on its way
	connected bool
	connErr   string
	retryAt   time.Time
	status    string // a note about the current box (an error sending)
	log       []LogLine
}

// NewModel returns the model before the first connection.
func NewModel(guard time.Duration) Model {
	return Model{Guard: guard, scope: gate.ScopeSession}
}

// ShownID is the id of the approval whose box is shown, or "".
func (m Model) ShownID() string { return m.shownID }

// GuardUntil is when the shown box starts taking keys.
func (m Model) GuardUntil() time.Time { return m.shownAt.Add(m.Guard) }

// Connected reports whether the event stream is up.
func (m Model) Connected() bool { return m.connected }

// Log returns the recent lines of what happened, oldest first.
func (m Model) Log() []LogLine { return slices.Clone(m.log) }

func (m Model) current() *gate.Approval {
	if len(m.pending) == 0 {
		return nil
	}
	return m.pending[0].a
}

// Update applies msg to m.
func Update(m Model, msg Msg) (Model, Action) {
	var act Action
	switch msg := msg.(type) {
	case KeyMsg:
		m, act = m.key(msg)
	case EventMsg:
		m = m.event(msg.Event, msg.At)
	case SyncedMsg:
		m = m.synced(msg)
	case DisconnectedMsg:
		m.connected = false
		m.connErr = msg.Err
		m.retryAt = msg.RetryAt
		m.pending = slices.Clone(m.pending)
		for i := range m.pending {
			m.pending[i].confirmed = false
		}
	case DecidedMsg:
		m = m.decided(msg)
	}
	return m.settle(msg.when()), act
}

// settle shows the oldest pending approval: a box that is new starts fresh
// (selection, reason, scroll), with its guard time from at.
func (m Model) settle(at time.Time) Model {
	cur := m.current()
	if cur == nil {
		m.shownID = ""
		return m
	}
	if cur.ID != m.shownID {
		m.shownID = cur.ID
		m.shownAt = at
		m.sel = ChoiceApprove
		m.scope = gate.ScopeSession
		m.reason = ""
		m.scroll = 0
		m.status = ""
	}
	return m
}

func (m Model) key(k KeyMsg) (Model, Action) {
	if k.Key.Kind == KeyCtrlC {
		return m, Action{Quit: true}
	}
	cur := m.current()
	if cur == nil || cur.ID != m.shownID || k.At.Before(m.GuardUntil()) {
		// No box, or the box appeared after this key was pressed: the key
		// was meant for something else and must not decide this one.
		return m, Action{}
	}
	if m.sending != "" {
		return m, Action{}
	}
	switch k.Key.Kind {
	case KeyUp:
		m.sel = max(m.sel-1, ChoiceApprove)
	case KeyDown:
		m.sel = min(m.sel+1, ChoiceDeny)
	case KeyLeft, KeyRight, KeyTab:
		if m.sel == ChoiceAlways {
			if m.scope == gate.ScopeSession {
				m.scope = gate.ScopeAgent
			} else {
				m.scope = gate.ScopeSession
			}
		}
	case KeyPgUp:
		m.scroll = max(m.scroll-scrollStep, 0)
	case KeyPgDn:
		m.scroll += scrollStep // Render clamps it to the body
	case KeyEsc:
		m.reason = ""
	case KeyBackspace:
		if m.reason != "" {
			_, n := utf8.DecodeLastRuneInString(m.reason)
			m.reason = m.reason[:len(m.reason)-n]
		}
	case KeyEnter:
		switch m.sel {
		case ChoiceApprove:
			return m.decide(DecideApprove)
		case ChoiceAlways:
			return m.decide(DecideAlways)
		default:
			return m.decide(DecideDeny)
		}
	case KeyRune:
		return m.rune(k.Key.Rune)
	}
	return m, Action{}
}

// rune handles a printable key. See the package doc for the rule.
func (m Model) rune(r rune) (Model, Action) {
	if m.sel == ChoiceDeny || m.reason != "" {
		if utf8.RuneCountInString(m.reason) < MaxReason && (m.reason != "" || r != ' ') {
			m.reason += string(r)
		}
		m.sel = ChoiceDeny
		return m, Action{}
	}
	switch {
	case r == '1':
		return m.decide(DecideApprove)
	case r == '2':
		m.sel = ChoiceAlways
	case r == '3':
		m.sel = ChoiceDeny
	case r == 's':
		return m.decide(DecideStop)
	case unicode.IsLetter(r):
		m.reason = string(r)
		m.sel = ChoiceDeny
	}
	return m, Action{}
}

func (m Model) decide(kind DecisionKind) (Model, Action) {
	if !m.connected {
		m.status = "not connected to the daemon: nothing was decided"
		return m, Action{}
	}
	if kind == DecideAlways && !hasAlways(m.current()) {
		// Nothing would be saved: an Always here would be a plain approve
		// the person did not choose.
		m.status = "no Always pattern for this call: choose 1 Approve once or 3 Deny"
		return m, Action{}
	}
	d := &Decision{ID: m.shownID, Kind: kind}
	switch kind {
	case DecideAlways:
		d.Scope = m.scope
	case DecideDeny:
		d.Reason = strings.TrimSpace(m.reason)
	}
	m.sending = m.shownID
	m.status = ""
	return m, Action{Decide: d}
}

func (m Model) event(ev gate.Event, at time.Time) Model {
	a := ev.Approval
	if a == nil || a.ID == "" {
		return m
	}
	if ev.Type == gate.EventApprovalRequired && a.Status == gate.StatusPending {
		return m.upsert(a)
	}
	if a.Status.Final() {
		return m.resolve(a, at)
	}
	return m
}

// upsert adds or refreshes a pending approval, keeping the queue oldest first.
func (m Model) upsert(a *gate.Approval) Model {
	p := slices.Clone(m.pending)
	if i := m.index(a.ID); i >= 0 {
		p[i] = item{a: a, confirmed: true}
	} else {
		p = append(p, item{a: a, confirmed: true})
	}
	slices.SortStableFunc(p, func(x, y item) int {
		if c := x.a.CreatedAt.Compare(y.a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(x.a.ID, y.a.ID)
	})
	m.pending = p
	return m
}

// resolve closes the box of a final approval with a line saying how it ended.
func (m Model) resolve(a *gate.Approval, at time.Time) Model {
	if m.sending == a.ID {
		m.sending = ""
	}
	i := m.index(a.ID)
	if i < 0 {
		return m
	}
	m.pending = slices.Delete(slices.Clone(m.pending), i, i+1)
	good := a.Status == gate.StatusApproved || a.Status == gate.StatusApprovedAlways || a.Status == gate.StatusAllowed
	return m.addLog(LogLine{At: at, Text: prompt.Outcome(a) + " — " + summary(a), Good: good})
}

func (m Model) addLog(l LogLine) Model {
	lg := append(slices.Clone(m.log), l)
	if len(lg) > maxLog {
		lg = lg[len(lg)-maxLog:]
	}
	m.log = lg
	return m
}

func (m Model) index(id string) int {
	return slices.IndexFunc(m.pending, func(it item) bool { return it.a.ID == id })
}

func (m Model) synced(s SyncedMsg) Model {
	m.connected = true
	m.connErr = ""
	m.retryAt = time.Time{}
	now := make(map[string]bool, len(s.Pending))
	for _, a := range s.Pending {
		now[a.ID] = true
	}
	var kept []item
	for _, it := range m.pending {
		if it.confirmed || now[it.a.ID] {
			kept = append(kept, it)
			continue
		}
		m = m.addLog(LogLine{At: s.At, Text: "Closed while the connection was down — " + summary(it.a)})
	}
	m.pending = kept
	for _, a := range s.Pending {
		if a.Status == gate.StatusPending {
			m = m.upsert(a)
		}
	}
	return m
}

func (m Model) decided(d DecidedMsg) Model {
	if m.sending == d.ID {
		m.sending = ""
	}
	if d.Approval != nil && d.Approval.Status.Final() {
		// Decided, by us or (when Err says already decided) by someone
		// first: the approval says who.
		return m.resolve(d.Approval, d.At)
	}
	if d.ID != m.shownID {
		return m
	}
	switch {
	case errors.Is(d.Err, gate.ErrAlreadyDecided):
		m.status = "already decided elsewhere; waiting for the daemon to say how"
	case d.Err != nil:
		m.status = fmt.Sprintf("sending the decision failed (%v); the approval is still pending", d.Err)
	}
	return m
}

// hasAlways reports whether the Always button would save a pattern for a.
func hasAlways(a *gate.Approval) bool {
	return a != nil && (len(a.Evaluation.Always) > 0 || len(a.Evaluation.AlwaysRules) > 0)
}

// summary is one line naming an approval's call, for the log: the path of
// a path tool, else the first line of the command or input.
func summary(a *gate.Approval) string {
	c := prompt.Build(a, time.Time{})
	for _, f := range c.Fields {
		if f.Name == "Path" {
			return prompt.VisibleLine(a.Tool+": ") + f.Value
		}
	}
	first, _, _ := strings.Cut(c.Body, "\n")
	return prompt.VisibleLine(a.Tool + ": " + first)
}

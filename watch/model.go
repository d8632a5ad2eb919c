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

// The choices, in the order shown (and numbered 1 to 5). The first three
// decide the call in focus; the batch choices, shown only in a grouped
// view, decide every call the view lists.
const (
	ChoiceApprove Choice = iota
	ChoiceAlways
	ChoiceDeny
	ChoiceApproveAll
	ChoiceDenyAll
)

// DecisionKind is what a person decided.
type DecisionKind string

// Decision kinds.
const (
	DecideApprove DecisionKind = "approve"
	DecideAlways  DecisionKind = "always"
	DecideDeny    DecisionKind = "deny"
	DecideStop    DecisionKind = "stop"
	// DecideApproveAll and DecideDenyAll decide every call of a grouped
	// view, exactly those in Members.
	DecideApproveAll DecisionKind = "approve_all"
	DecideDenyAll    DecisionKind = "deny_all"
)

// Decision is a decision the model asks the loop to send.
type Decision struct {
	ID        string // the call; for a batch, the first of Members
	Kind      DecisionKind
	Scope     gate.Scope         // for DecideAlways
	ExpiresAt *time.Time         // for DecideAlways: when the rule expires; nil never
	Reason    string             // for DecideDeny and DecideDenyAll
	Members   []gate.BatchMember // for a batch: the calls shown, each with its digest
	// Digest is the digest of the call as shown (not for a batch, whose
	// Members carry theirs): the daemon decides only that input.
	Digest string
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
	// Kind is the decision's kind; for a batch (DecideApproveAll,
	// DecideDenyAll) Results say what happened to each call.
	Kind    DecisionKind
	Results []gate.BatchResult
	Err     error
	At      time.Time
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
	// stillAt is when the daemon, reached again after the connection was
	// lost (a restart of the daemon, or of the network), said the approval
	// is still pending; zero if it never had to.
	stillAt time.Time
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

	pending []item // oldest first
	// The view shown: the oldest pending call and, when its session has
	// more pending, the others of that session (a grouped view).
	shownID   string   // its first call
	shown     []string // the ids of every call it lists
	shownAt   time.Time
	focus     string // the call the single-call choices decide
	sel       Choice
	scope     int // index in prompt.AlwaysChoices
	reason    string
	scroll    int    // body lines from the top of the call in focus
	sending   string // id of an approval (or sendingBatch) whose decision is on its way
	connected bool
	connErr   string
	retryAt   time.Time
	status    string // a note about the current box (an error sending)
	log       []LogLine
}

// sendingBatch is Model.sending while a batch decision is on its way.
const sendingBatch = "\x00batch"

// NewModel returns the model before the first connection.
func NewModel(guard time.Duration) Model {
	return Model{Guard: guard}
}

// ShownID is the id of the approval whose box is shown, or "".
func (m Model) ShownID() string { return m.shownID }

// GuardUntil is when the shown box starts taking keys.
func (m Model) GuardUntil() time.Time { return m.shownAt.Add(m.Guard) }

// Connected reports whether the event stream is up.
func (m Model) Connected() bool { return m.connected }

// Log returns the recent lines of what happened, oldest first.
func (m Model) Log() []LogLine { return slices.Clone(m.log) }

// Shown returns the ids of the calls the view lists: one, or a grouped
// view's.
func (m Model) Shown() []string { return slices.Clone(m.shown) }

// Focus is the id of the call the single-call choices decide.
func (m Model) Focus() string { return m.focus }

func (m Model) current() *gate.Approval {
	if len(m.pending) == 0 {
		return nil
	}
	return m.pending[0].a
}

// sessionKey names the session an approval belongs to, for grouping; ""
// for a call without a session, which is never grouped (as in the gate).
func sessionKey(a *gate.Approval) string {
	if a.SessionID == "" {
		return ""
	}
	return a.Agent + "\x00" + a.SessionID
}

// view returns the calls the screen shows: the oldest pending one and the
// other pending calls of its session, oldest first, at most gate.MaxBatch
// (the rest of the session gets views of its own, later).
func (m Model) view() []*gate.Approval {
	cur := m.current()
	if cur == nil {
		return nil
	}
	key := sessionKey(cur)
	if key == "" {
		return []*gate.Approval{cur}
	}
	var out []*gate.Approval
	for _, it := range m.pending {
		if sessionKey(it.a) == key {
			out = append(out, it.a)
			if len(out) == gate.MaxBatch {
				break
			}
		}
	}
	return out
}

// focused is the call in focus, or nil.
func (m Model) focused() *gate.Approval {
	for _, a := range m.view() {
		if a.ID == m.focus {
			return a
		}
	}
	return m.current()
}

// grouped reports whether the view lists two or more calls.
func (m Model) grouped() bool { return len(m.shown) > 1 }

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

// settle shows the oldest pending approval, with the other pending calls
// of its session: a view that is new starts fresh (selection, reason,
// scroll), with its guard time from at. A view that gained a call takes
// keys again only after the guard, so a batch choice decides the calls
// the person has seen; one that lost a call (decided) stays as it is.
func (m Model) settle(at time.Time) Model {
	v := m.view()
	if len(v) == 0 {
		m.shownID, m.shown, m.focus = "", nil, ""
		return m
	}
	ids := make([]string, len(v))
	for i, a := range v {
		ids[i] = a.ID
	}
	switch {
	case v[0].ID != m.shownID:
		m.shownID = v[0].ID
		m.shownAt = at
		m.focus = v[0].ID
		m.sel = ChoiceApprove
		m.scope = 0
		m.reason = ""
		m.scroll = 0
		m.status = ""
	case slices.ContainsFunc(ids, func(id string) bool { return !slices.Contains(m.shown, id) }):
		m.shownAt = at
	}
	m.shown = ids
	if !slices.Contains(ids, m.focus) {
		m.focus, m.scroll = ids[0], 0
		if m.sel == ChoiceAlways {
			m.sel = ChoiceApprove // the Always step showed another call's patterns
		}
	}
	if !m.grouped() && m.sel > ChoiceDeny {
		m.sel = ChoiceDeny
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
	last := ChoiceDeny
	if m.grouped() {
		last = ChoiceDenyAll
	}
	switch k.Key.Kind {
	case KeyUp:
		m.sel = max(m.sel-1, ChoiceApprove)
	case KeyDown:
		m.sel = min(m.sel+1, last)
	case KeyLeft, KeyRight, KeyTab:
		step := 1
		if k.Key.Kind == KeyLeft {
			step = -1
		}
		switch {
		case m.sel == ChoiceAlways:
			n := len(prompt.AlwaysChoices)
			m.scope = (m.scope + step + n) % n
		case m.grouped():
			m = m.moveFocus(step)
		}
	case KeyPgUp:
		m.scroll = max(m.scroll-scrollStep, 0)
	case KeyPgDn:
		m.scroll += scrollStep // Render clamps it to the body
	case KeyEsc:
		m.reason = ""
		m.status = "" // dismissed: the next answer shows on a clean line
	case KeyBackspace:
		if m.reason != "" {
			_, n := utf8.DecodeLastRuneInString(m.reason)
			m.reason = m.reason[:len(m.reason)-n]
		}
	case KeyEnter:
		switch m.sel {
		case ChoiceApprove:
			return m.decide(DecideApprove, k.At)
		case ChoiceAlways:
			return m.decide(DecideAlways, k.At)
		case ChoiceApproveAll:
			return m.decide(DecideApproveAll, k.At)
		case ChoiceDenyAll:
			return m.decide(DecideDenyAll, k.At)
		default:
			return m.decide(DecideDeny, k.At)
		}
	case KeyRune:
		return m.rune(k.Key.Rune, k.At)
	}
	return m, Action{}
}

// moveFocus moves the focus step calls along the grouped view, wrapping.
func (m Model) moveFocus(step int) Model {
	n := len(m.shown)
	i := slices.Index(m.shown, m.focus)
	m.focus = m.shown[(max(i, 0)+step+n)%n]
	m.scroll = 0
	return m
}

// rune handles a printable key. See the package doc for the rule.
func (m Model) rune(r rune, at time.Time) (Model, Action) {
	if m.sel == ChoiceDeny || m.sel == ChoiceDenyAll || m.reason != "" {
		if utf8.RuneCountInString(m.reason) < MaxReason && (m.reason != "" || r != ' ') {
			m.reason += string(r)
		}
		if m.sel != ChoiceDenyAll {
			m.sel = ChoiceDeny
		}
		return m, Action{}
	}
	switch {
	case r == '1':
		return m.decide(DecideApprove, at)
	case r == '2':
		m.sel = ChoiceAlways
	case r == '3':
		m.sel = ChoiceDeny
	case r == '4' && m.grouped():
		return m.decide(DecideApproveAll, at)
	case r == '5' && m.grouped():
		m.sel = ChoiceDenyAll
	case r == 's':
		return m.decide(DecideStop, at)
	case unicode.IsLetter(r):
		m.reason = string(r)
		m.sel = ChoiceDeny
	}
	return m, Action{}
}

// decide makes the decision of kind for what the view shows now, the
// key having been pressed at at (an Always rule's expiry counts from it).
func (m Model) decide(kind DecisionKind, at time.Time) (Model, Action) {
	if !m.connected {
		m.status = "not connected to the daemon: nothing was decided"
		return m, Action{}
	}
	f := m.focused()
	if kind == DecideAlways && !hasAlways(f) {
		// Nothing would be saved: an Always here would be a plain approve
		// the person did not choose.
		m.status = "no Always pattern for this call: choose 1 Approve once or 3 Deny"
		return m, Action{}
	}
	d := &Decision{ID: f.ID, Kind: kind, Digest: f.Digest}
	m.sending = f.ID
	switch kind {
	case DecideAlways:
		sc := prompt.AlwaysChoices[m.scope]
		d.Scope, d.ExpiresAt = sc.Scope, sc.ExpiresAt(at)
	case DecideDeny, DecideDenyAll:
		d.Reason = strings.TrimSpace(m.reason)
	}
	if kind == DecideApproveAll || kind == DecideDenyAll {
		// Exactly the calls on the screen, each bound to the input it was
		// shown with: a call that arrived since is not among them.
		for _, a := range m.view() {
			d.Members = append(d.Members, gate.BatchMember{ID: a.ID, Digest: a.Digest})
		}
		d.ID, d.Digest = d.Members[0].ID, ""
		m.sending = sendingBatch
	}
	m.status = ""
	return m, Action{Decide: d}
}

func (m Model) event(ev gate.Event, at time.Time) Model {
	a := ev.Approval
	if a == nil || a.ID == "" {
		return m
	}
	if ev.Type == gate.EventApprovalRequired && a.Status == gate.StatusPending {
		return m.upsert(a, at)
	}
	if a.Status.Final() {
		return m.resolve(a, at)
	}
	return m
}

// upsert adds or refreshes a pending approval (at is when the daemon said
// so), keeping the queue oldest first; calls created at the same instant
// stay in the order the daemon sent them (the order they asked), not in
// the order of their ids, which are random.
func (m Model) upsert(a *gate.Approval, at time.Time) Model {
	p := slices.Clone(m.pending)
	if i := m.index(a.ID); i >= 0 {
		still := p[i].stillAt
		if !p[i].confirmed {
			still = at // it waited through the outage
		}
		p[i] = item{a: a, confirmed: true, stillAt: still}
	} else {
		p = append(p, item{a: a, confirmed: true})
	}
	slices.SortStableFunc(p, func(x, y item) int { return x.a.CreatedAt.Compare(y.a.CreatedAt) })
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
			m = m.upsert(a, s.At)
		}
	}
	return m
}

func (m Model) decided(d DecidedMsg) Model {
	if d.Kind == DecideApproveAll || d.Kind == DecideDenyAll {
		return m.batchDecided(d)
	}
	if m.sending == d.ID {
		m.sending = ""
	}
	if d.Approval != nil && d.Approval.Status.Final() {
		// Decided, by us or (when Err says already decided) by someone
		// first: the approval says who.
		return m.resolve(d.Approval, d.At)
	}
	if !slices.Contains(m.shown, d.ID) {
		return m
	}
	switch {
	case errors.Is(d.Err, gate.ErrAlreadyDecided):
		m.status = "already decided elsewhere; waiting for the daemon to say how"
	case errors.Is(d.Err, gate.ErrDigestMismatch):
		m.status = "refused: the decision was not for the input shown here; nothing was decided"
	case d.Err != nil:
		m.status = fmt.Sprintf("sending the decision failed (%v); the approval is still pending", d.Err)
	}
	return m
}

// batchDecided applies the answer to a batch decision: every call it
// decided (or found decided) leaves the view; what it left pending is said.
func (m Model) batchDecided(d DecidedMsg) Model {
	if m.sending == sendingBatch {
		m.sending = ""
	}
	if d.Err != nil {
		m.status = fmt.Sprintf("sending the decision failed (%v); nothing was decided", d.Err)
		return m
	}
	approve := d.Kind == DecideApproveAll
	all := true
	for _, r := range d.Results {
		all = all && r.Result == gate.BatchDecided
	}
	for _, r := range d.Results {
		if r.Approval != nil && r.Approval.Status.Final() {
			m = m.resolve(r.Approval, d.At)
		}
	}
	if !all {
		m = m.addLog(LogLine{At: d.At, Text: prompt.BatchOutcome(approve, d.Results), Good: approve})
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

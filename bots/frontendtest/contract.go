package frontendtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"approvalbot/gate"
	"approvalbot/gate/gatetest"
	"approvalbot/prompt"
)

// The cases, by the names Run gives their subtests and Driver.Skips uses.
const (
	CaseBurst              = "burst_under_rate_limit"
	CaseDecidedWhileQueued = "decided_while_queued"
	CaseRestart            = "restart_refresh_old_buttons"
	CaseEmptyApprovers     = "empty_approvers_refuse"
	CaseStranger           = "stranger_refused"
	CaseWrongDigest        = "wrong_digest_refused"
	CaseAlwaysSession      = "always_session"
	CaseAlwaysAgent        = "always_agent"
	CaseFull               = "full_content"
	CaseNoSecrets          = "no_secret_in_logs"
)

// burstSize is how many calls ask at once in CaseBurst.
const burstSize = 6

// Run runs every contract case against a frontend, each as a subtest with
// a Driver of its own from newDriver. After every case it checks that no
// secret of the driver's appears in what the frontend logged.
func Run(t *testing.T, newDriver func(t *testing.T) Driver) {
	cases := []struct {
		name string
		run  func(*run)
	}{
		{CaseBurst, burst},
		{CaseDecidedWhileQueued, decidedWhileQueued},
		{CaseRestart, restart},
		{CaseEmptyApprovers, emptyApprovers},
		{CaseStranger, stranger},
		{CaseWrongDigest, wrongDigest},
		{CaseAlwaysSession, func(r *run) { always(r, AlwaysSession, gate.ScopeSession) }},
		{CaseAlwaysAgent, func(r *run) { always(r, AlwaysAgent, gate.ScopeAgent) }},
		{CaseFull, full},
		{CaseNoSecrets, noSecrets},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDriver(t)
			if why, ok := d.Skips()[c.name]; ok {
				t.Skipf("does not apply to %s: %s", d.Name(), why)
			}
			r := &run{t: t, d: d}
			t.Cleanup(r.checkSecrets)
			c.run(r)
		})
	}
}

// run is one case's state: the driver, the gate and the store it outlives.
type run struct {
	t       *testing.T
	d       Driver
	setup   Setup
	env     *gatetest.Env
	store   gate.Store
	seq     int
	answers []Answer
}

// start starts the gate (on the case's store) and the frontend with s.
func (r *run) start(s Setup) {
	r.t.Helper()
	r.setup = s
	env := gatetest.New(r.t, gatetest.Options{Store: r.store, NoStart: true})
	r.env, r.store = env, env.Store
	s.Env = env
	r.d.Start(r.t, s)
	if err := env.G.Start(context.Background()); err != nil {
		r.t.Fatalf("start the gate: %v", err)
	}
}

// restart closes the gate and the frontend and starts both again on the
// same store, as a daemon restart does.
func (r *run) restart() {
	r.t.Helper()
	r.env.G.Close()
	r.d.Stop(r.t)
	r.start(r.setup)
}

func (r *run) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	r.t.Cleanup(cancel)
	return ctx
}

// ask submits a Bash call of command from a session of its own (so no
// two calls of a case share a grouped view); it must ask.
func (r *run) ask(command string) *gate.Approval {
	r.t.Helper()
	r.seq++
	c := gatetest.Bash(command)
	c.SessionID = fmt.Sprintf("contract-%d", r.seq)
	return r.env.Ask(r.t, c)
}

func (r *run) newest(id string) (Prompt, bool) {
	vs := r.d.Prompts(r.t, id)
	if len(vs) == 0 {
		return Prompt{}, false
	}
	return vs[len(vs)-1], true
}

// live waits until a's prompt is shown with live choices, and checks it
// shows the call and offers the choices every frontend offers.
func (r *run) live(a *gate.Approval, command string) Prompt {
	r.t.Helper()
	var p Prompt
	gatetest.Eventually(r.t, "a live prompt of "+a.ID, func() bool {
		var ok bool
		p, ok = r.newest(a.ID)
		return ok && p.Live
	})
	// The same choices everywhere; their layout is the platform's.
	want := kinds(prompt.Choices(a, prompt.Build(a, time.Now())))
	if got := slices.Sorted(slices.Values(p.Choices)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		r.t.Errorf("prompt of %s offers %v, want %v (prompt.Choices)", a.ID, p.Choices, want)
	}
	if command != "" && !strings.Contains(p.Text, command) {
		r.t.Errorf("prompt of %s does not show the command %q:\n%s", a.ID, command, p.Text)
	}
	return p
}

func kinds(cs []prompt.Choice) []prompt.ChoiceKind {
	var out []prompt.ChoiceKind
	for _, c := range cs {
		out = append(out, c.Kind)
	}
	return out
}

func (r *run) press(p Press) Answer {
	r.t.Helper()
	ans := r.d.Press(r.t, p)
	r.answers = append(r.answers, ans)
	return ans
}

// final waits until approval id is decided with want, and its prompt then
// shows the outcome, with who decided, and offers nothing.
func (r *run) final(id string, want gate.Status) *gate.Approval {
	r.t.Helper()
	a, err := r.env.G.Wait(r.ctx(), id)
	if err != nil || a.Status != want {
		r.t.Fatalf("approval %s: %v, want %s (err %v)", id, a.Status, want, err)
	}
	var p Prompt
	gatetest.Eventually(r.t, "the outcome on the prompt of "+id, func() bool {
		var ok bool
		p, ok = r.newest(id)
		return ok && !p.Live && strings.Contains(p.Text, a.DecidedBy)
	})
	if len(p.Choices) != 0 {
		r.t.Errorf("prompt of %s still offers %v after the decision", id, p.Choices)
	}
	return a
}

// pending checks that approval id is still undecided and that no Always
// rule was saved.
func (r *run) pending(id, after string) {
	r.t.Helper()
	if a := r.env.Get(r.t, id); a.Status != gate.StatusPending {
		r.t.Fatalf("%s decided approval %s: %s by %q", after, id, a.Status, a.DecidedBy)
	}
	if rules, _ := r.env.G.Rules(r.ctx(), ""); len(rules) != 0 {
		r.t.Fatalf("%s saved Always rules %v", after, rules)
	}
}

// refused presses each choice as who and checks that each is answered and
// decides nothing.
func (r *run) refused(a *gate.Approval, who User, tamper bool, choices ...Choice) {
	r.t.Helper()
	for _, c := range choices {
		what := fmt.Sprintf("%s pressing %s%s", who, c.Kind, c.Scope)
		if tamper {
			what += " with a tampered digest"
		}
		ans := r.press(Press{ID: a.ID, Choice: c, As: who, Tamper: tamper})
		if strings.TrimSpace(ans.Text) == "" {
			r.t.Errorf("%s: the presser was told nothing", what)
		}
		r.pending(a.ID, what)
	}
	if p, ok := r.newest(a.ID); ok && !p.Live {
		r.t.Errorf("after refused presses the prompt of %s is no longer live:\n%s", a.ID, p.Text)
	}
}

// checkSecrets: no secret in the logs, the answers or any prompt.
func (r *run) checkSecrets() {
	logs := r.d.Logs()
	for _, s := range r.d.Secrets() {
		if s == "" {
			continue
		}
		if strings.Contains(logs, s) {
			r.t.Errorf("a secret of %s was logged:\n%s", r.d.Name(), logs)
		}
		for _, a := range r.answers {
			if strings.Contains(a.Text, s) {
				r.t.Errorf("a secret of %s was in an answer: %q", r.d.Name(), a.Text)
			}
		}
	}
}

// burst: a burst of calls under the emulator's rate limit; every prompt is
// shown, once, and decided from its buttons.
func burst(r *run) {
	r.start(Setup{Approvers: []User{Approver}, RateLimit: 2})
	var as []*gate.Approval
	var cmds []string
	for i := range burstSize {
		cmd := fmt.Sprintf("make burst-%d", i)
		as, cmds = append(as, r.ask(cmd)), append(cmds, cmd)
	}
	// A frontend may show one call at a time (a terminal): decide each
	// before looking for the next.
	for i, a := range as {
		r.live(a, cmds[i])
		r.press(Press{ID: a.ID, Choice: Approve, As: Approver})
		r.final(a.ID, gate.StatusApproved)
	}
	for _, a := range as {
		if msgs := messages(r.d.Prompts(r.t, a.ID)); len(msgs) != 1 {
			r.t.Errorf("approval %s was shown in %d messages %v, want 1", a.ID, len(msgs), msgs)
		}
	}
}

func messages(vs []Prompt) []string {
	var out []string
	for _, v := range vs {
		if !slices.Contains(out, v.Message) {
			out = append(out, v.Message)
		}
	}
	return out
}

// decidedWhileQueued: a call decided while its prompt waits behind another
// is never shown with live choices; the calls around it are.
func decidedWhileQueued(r *run) {
	r.start(Setup{Approvers: []User{Approver}})
	held, release := r.d.Hold(r.t)
	defer release()
	first := r.ask("make first")
	select {
	case <-held:
	case <-r.ctx().Done():
		r.t.Fatal("the first prompt was never sent")
	}
	queued := r.ask("make queued")
	if _, err := r.env.G.Decide(r.ctx(), queued.ID, gate.Decision{Approve: true, By: "bob", Via: "cli"}); err != nil {
		r.t.Fatal(err)
	}
	after := r.ask("make after")
	release()
	r.live(first, "make first")
	r.press(Press{ID: first.ID, Choice: Approve, As: Approver})
	r.final(first.ID, gate.StatusApproved)
	r.live(after, "make after")
	for _, v := range r.d.Prompts(r.t, queued.ID) {
		if v.Live {
			r.t.Errorf("the call decided while queued was shown with live choices:\n%s", v.Text)
		}
	}
}

// restart: after a restart the prompt is refreshed in place (still
// waiting), and the buttons sent before the restart decide it.
func restart(r *run) {
	r.start(Setup{Approvers: []User{Approver}})
	a := r.ask("make restart")
	old := r.live(a, "make restart")
	if n, ok := r.d.(Notifier); ok && n.Notifies() {
		// The gate records where the prompt went after the send returns;
		// a gate closed in between forgets it and shows the prompt anew
		// after the restart (a shutdown race of the gate's, not this case).
		r.env.Shown(r.t, a.ID, r.d.Name())
	}
	r.restart()
	gatetest.Eventually(r.t, "the prompt refreshed after the restart", func() bool {
		p, ok := r.newest(a.ID)
		return ok && p.Live && strings.Contains(p.Text, "Still waiting")
	})
	if msgs := messages(r.d.Prompts(r.t, a.ID)); len(msgs) != 1 {
		r.t.Errorf("after the restart the prompt is in messages %v, want the old one refreshed", msgs)
	}
	r.press(Press{ID: a.ID, Choice: Approve, As: Approver, On: &old})
	r.final(a.ID, gate.StatusApproved)
}

// emptyApprovers: with nobody configured, nobody may decide.
func emptyApprovers(r *run) {
	r.start(Setup{})
	a := r.ask("make nobody")
	r.refused(a, Approver, false, Approve, AlwaysSession, Deny, Stop)
}

// stranger: someone who is not an approver decides nothing; the approver
// still can.
func stranger(r *run) {
	r.start(Setup{Approvers: []User{Approver}})
	a := r.ask("make stranger")
	r.live(a, "make stranger")
	r.refused(a, Stranger, false, Approve, AlwaysAgent, Deny, Stop)
	r.press(Press{ID: a.ID, Choice: Deny, As: Approver})
	r.final(a.ID, gate.StatusDenied)
}

// wrongDigest: a press bound to another input decides nothing; the
// genuine button still works.
func wrongDigest(r *run) {
	r.start(Setup{Approvers: []User{Approver}})
	a := r.ask("make digest")
	r.live(a, "make digest")
	r.refused(a, Approver, true, Approve, AlwaysSession, Stop)
	r.press(Press{ID: a.ID, Choice: Stop, As: Approver})
	r.final(a.ID, gate.StatusDeniedStop)
}

// always: Always with a scope saves the call's pattern in that scope.
func always(r *run, c Choice, scope gate.Scope) {
	r.start(Setup{Approvers: []User{Approver}})
	cmd := "git push origin contract-" + string(scope)
	a := r.ask(cmd)
	if len(a.Evaluation.AlwaysRules) == 0 {
		r.t.Fatalf("the gate proposes no Always pattern for %q", cmd)
	}
	r.live(a, cmd)
	r.press(Press{ID: a.ID, Choice: c, As: Approver})
	got := r.final(a.ID, gate.StatusApprovedAlways)
	gatetest.Eventually(r.t, "the "+string(scope)+" Always rule", func() bool {
		rules, _ := r.env.G.Rules(r.ctx(), a.Agent)
		return len(rules) == 1 && rules[0].Scope == scope && rules[0].Pattern == a.Evaluation.AlwaysRules[0].Pattern &&
			(scope != gate.ScopeSession || rules[0].SessionID == a.SessionID)
	})
	if got.Via != r.d.Name() {
		r.t.Errorf("decided via %q, want %q", got.Via, r.d.Name())
	}
}

// full: content too long for one prompt is cut with a marker, and a
// person can get it whole without deciding anything.
func full(r *run) {
	r.start(Setup{Approvers: []User{Approver}})
	cmd := "echo " + strings.Repeat("0123456789abcdef-", 350) + " END"
	a := r.ask(cmd)
	p := r.live(a, "")
	marker := "✂"
	if s, ok := r.d.(Scroller); ok {
		marker = s.ScrollMarker()
	}
	if !strings.Contains(p.Text, cmd) && !strings.Contains(p.Text, marker) {
		r.t.Errorf("the prompt neither shows the whole command nor says it was cut (%q):\n%s", marker, p.Text)
	}
	if whole := r.d.Full(r.t, a.ID); !strings.Contains(whole, cmd) {
		r.t.Errorf("Full lacks the whole command (%d characters):\n%.300s…", len(whole), whole)
	}
	r.pending(a.ID, "reading the full content")
	r.press(Press{ID: a.ID, Choice: Approve, As: Approver})
	r.final(a.ID, gate.StatusApproved)
}

// noSecrets: transport errors, refusals and decisions leave no secret in
// a log line, an answer or a prompt.
func noSecrets(r *run) {
	r.start(Setup{Approvers: []User{Approver}, RateLimit: 1, Drops: 2})
	a := r.ask("make secrets")
	r.live(a, "make secrets")
	r.refused(a, Stranger, false, Approve)
	r.refused(a, Approver, true, Approve)
	r.press(Press{ID: a.ID, Choice: Approve, As: Approver})
	r.final(a.ID, gate.StatusApproved)
	if len(r.d.Secrets()) == 0 {
		r.t.Errorf("%s declares no secrets to look for", r.d.Name())
	}
	for _, v := range r.d.Prompts(r.t, a.ID) {
		for _, s := range r.d.Secrets() {
			if s != "" && strings.Contains(v.Text, s) {
				r.t.Errorf("a secret of %s is in a prompt:\n%s", r.d.Name(), v.Text)
			}
		}
	}
}

// Package watch is approvalbot's terminal frontend (`approvalbot watch`): it
// follows the daemon's event stream over the HTTP API and shows one box per
// pending approval, oldest first (one box for an agent session's pending
// calls), to be answered with the keyboard.
//
// The parts are kept apart so each can be tested alone:
//
//   - Model and Update (model.go): the state and its pure transitions
//     (state + message -> new state + action), no I/O and no clock.
//   - Render (render.go): a pure function of the model, the terminal size and
//     the time, to the text of one screen.
//   - Run (run.go): the event loop that owns the model and does the I/O
//     (events, decisions, keys, ticks, resizes, reconnects).
//   - tty_*.go: raw mode, the terminal size, SIGWINCH and input flushing.
//
// # Keys
//
//	1            approve at once
//	2            select Always (shows the pattern(s) and for how long); Enter saves
//	3            select Deny; type a reason, Enter denies
//	↑ ↓          move the selection; Enter confirms it
//	← → Tab      on Always: choose for how long (prompt.AlwaysChoices: this
//	             session, this agent for 1 hour, today, or with no expiry);
//	             in a grouped view: move the focus to another call
//	letters      start a deny reason and select Deny
//	Backspace    delete the last character of the reason
//	Esc          clear the reason (and dismiss the note under the choices)
//	s            Stop: deny and stop the agent's turn
//	4            in a grouped view: approve every call it lists, at once
//	5            in a grouped view: select Deny all; type a reason, Enter denies all
//	PgUp PgDn    scroll a command too long for the screen
//	Ctrl+C       leave without deciding
//
// The rule for `s` and digits: while the selection is Deny or Deny all or
// a reason is being typed, every printable key (digits and `s` included)
// is part of the reason. Otherwise digits are shortcuts, `s` is Stop, and
// any other letter starts a reason (lower-case `s` only; `S` starts a
// reason). So "sudo is not allowed" typed into a fresh box is Stop on its
// first key, which still denies; to give a reason starting with "s", press
// 3 first.
//
// # Grouped views
//
// When the oldest pending call's agent session has other calls pending,
// the box lists them all (at most gate.MaxBatch), each in full: command
// or diff, risk labels, the outside-project warning. 1, 2, 3 and s decide
// the call in focus (marked ▶); 4 and 5 decide every call listed, through
// the API's batch decision, each call bound to the digest of the input it
// was shown with. A call that arrives later joins the view, and the view
// takes keys again only after the guard below: a press decides exactly
// the calls on the screen when it was made, never one that came after.
//
// # Stale input
//
// A keypress must answer the box the person saw. When a new box is shown
// the loop discards input already waiting in the terminal, and the model
// ignores keys that arrive within Guard of the box appearing; the box says
// so ("keys enabled in a moment") until the guard has passed. Nothing is
// decided while the connection to the daemon is down, or while an earlier
// decision is still on its way.
package watch

// Package watch is approvalbot's terminal frontend (`approvalbot watch`): it
// follows the daemon's event stream over the HTTP API and shows one box per
// pending approval, oldest first, to be answered with the keyboard.
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
//	2            select Always (shows the pattern(s) and the scope); Enter saves
//	3            select Deny; type a reason, Enter denies
//	↑ ↓          move the selection; Enter confirms it
//	← → Tab      on Always: switch the scope (this session / this agent)
//	letters      start a deny reason and select Deny
//	Backspace    delete the last character of the reason
//	Esc          clear the reason
//	s            Stop: deny and stop the agent's turn
//	PgUp PgDn    scroll a command too long for the screen
//	Ctrl+C       leave without deciding
//
// The rule for `s` and digits: while the selection is Deny or a reason is
// being typed, every printable key (digits and `s` included) is part of the
// reason. Otherwise digits are shortcuts, `s` is Stop, and any other letter
// starts a reason (lower-case `s` only; `S` starts a reason). So "sudo is
// not allowed" typed into a fresh box is Stop on its first key, which still
// denies; to give a reason starting with "s", press 3 first.
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

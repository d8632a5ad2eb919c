package telegram

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"approvalbot/bots/telegramtest"
	"approvalbot/gate"
	"approvalbot/gate/gatetest"
)

func withGroups(c *Config) { c.NoGroups = false }

// waitButton waits until message id has a button whose label starts with
// prefix, and returns its data.
func (h *harness) waitButton(id int, prefix string) string {
	h.t.Helper()
	var data string
	_, err := h.srv.WaitMessage(h.ctx(), testChat, func(m telegramtest.Message) bool {
		if m.ID != id {
			return false
		}
		for _, b := range m.Buttons() {
			if strings.HasPrefix(b[0], prefix) {
				data = b[1]
				return true
			}
		}
		return false
	})
	if err != nil {
		h.t.Fatalf("message %d never had a button %q; now %v", id, prefix, h.message(id).Buttons())
	}
	return data
}

// TestTelegramBatch: a session's second pending call turns its prompt into
// a grouped view listing both in full; Approve all pressed on the view of
// two decides those two, never the third call that arrived after it was
// rendered; the view then shows the third alone with its own buttons.
func TestTelegramBatch(t *testing.T) {
	h := newHarness(t, withGroups)
	h.run()
	a1 := h.add("make build")
	msg := h.notify(a1)
	a2 := h.add("rm -rf ./dist")
	all2 := h.waitButton(msg, "✅ Approve all 2")
	text := plain(t, h.message(msg))
	for _, want := range []string{"make build", "rm -rf ./dist", "deletes recursively", "2 calls waiting"} {
		if !strings.Contains(text, want) {
			t.Errorf("grouped view lacks %q:\n%s", want, text)
		}
	}
	if len(all2) > 64 {
		t.Errorf("batch button data %q is %d bytes", all2, len(all2))
	}
	a3 := h.add("npm publish")
	h.waitButton(msg, "✅ Approve all 3")

	if ans := h.press(msg, eve, all2); !strings.Contains(ans.Text, "not an approver") {
		t.Errorf("non-approver's batch press: %q", ans.Text)
	}
	ans := h.press(msg, ana, all2) // the view as it was before a3
	if !strings.Contains(ans.Text, "Approved 2 of 2") {
		t.Errorf("answer %q", ans.Text)
	}
	for _, a := range []*gate.Approval{a1, a2} {
		if got := h.env.Get(t, a.ID); got.Status != gate.StatusApproved || got.DecidedBy != "@ana" || got.Via != Name {
			t.Errorf("%s: %s by %s via %s", a.ID, got.Status, got.DecidedBy, got.Via)
		}
	}
	if got := h.env.Get(t, a3.ID); got.Status != gate.StatusPending {
		t.Fatalf("the call that arrived after the view was rendered is %s", got.Status)
	}
	h.waitText(msg, "1 call waiting")
	deny := h.waitButton(msg, "❌ Deny")
	if ans := h.press(msg, ana, deny); !strings.Contains(ans.Text, "Denied") {
		t.Errorf("deny answer %q", ans.Text)
	}
	h.waitText(msg, "3 calls decided")
	if n := len(h.srv.Calls("sendMessage")); n != 1 {
		t.Errorf("%d messages sent for three calls of one session, want 1", n)
	}
	// A press on the finished batch changes nothing.
	if ans := h.press(msg, ana, all2); !strings.Contains(ans.Text, "already decided") {
		t.Errorf("press on a finished batch: %q", ans.Text)
	}
}

// everydayMix is n command lines spread over gate/testdata/everyday.txt
// that the test rules ask about.
func everydayMix(t *testing.T, n int) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "gate", "testdata", "everyday.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "  #risky"))
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "ls") || strings.HasPrefix(l, "git status") {
			continue
		}
		lines = append(lines, l)
	}
	var out []string
	for i := 0; len(out) < n; i += len(lines) / n {
		out = append(out, lines[i%len(lines)])
	}
	return out
}

// TestBatchFewerMessagesAndPresses measures what a person must read and
// press for a session of 20 everyday calls from one agent, 5 pending at
// once, before batches (one message and one press per call) and after.
func TestBatchFewerMessagesAndPresses(t *testing.T) {
	cmds := everydayMix(t, 20)
	run := func(groups bool) (messages, presses int) {
		h := newHarness(t, func(c *Config) { c.NoGroups = !groups })
		h.run()
		for wave := 0; wave < len(cmds); wave += 5 {
			var as []*gate.Approval
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, c := range cmds[wave : wave+5] {
				wg.Go(func() {
					a := h.add(c)
					mu.Lock()
					as = append(as, a)
					mu.Unlock()
				})
			}
			wg.Wait()
			if groups {
				msg := h.notify(as[0])
				data := h.waitButton(msg, "✅ Approve all 5")
				h.press(msg, ana, data)
				presses++
			} else {
				for _, a := range as {
					msg := h.notify(a)
					h.press(msg, ana, dataOf(t, h.message(msg), "✅ Approve"))
					presses++
				}
			}
			for _, a := range as {
				gatetest.Eventually(t, "the call decided", func() bool { return h.env.Get(t, a.ID).Status == gate.StatusApproved })
			}
		}
		return len(h.srv.Calls("sendMessage")), presses
	}
	m0, p0 := run(false)
	m1, p1 := run(true)
	t.Logf("20 calls, 5 pending at once: before batches %d messages and %d presses; with batches %d messages and %d presses", m0, p0, m1, p1)
	if m0 != 20 || p0 != 20 {
		t.Errorf("before: %d messages, %d presses; want 20 and 20", m0, p0)
	}
	if m1 != 4 || p1 != 4 {
		t.Errorf("with batches: %d messages, %d presses; want 4 and 4", m1, p1)
	}
}

package slack

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"approvalbot/gate"
	"approvalbot/prompt"
)

// mrkdwnTexts returns every mrkdwn text object of a rendered message.
func mrkdwnTexts(t *testing.T, blocks []slack.Block) []string {
	t.Helper()
	raw, err := json.Marshal(blocks)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["type"] == "mrkdwn" {
				s, _ := x["text"].(string)
				out = append(out, s)
				if x["verbatim"] != true {
					t.Errorf("mrkdwn text without verbatim: %q", s)
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	walk(v)
	return out
}

var broadcast = regexp.MustCompile(`(?i)@(channel|here|everyone)\b`)

func TestRenderNeutralisesAgentText(t *testing.T) {
	attacks := []struct{ name, agent, command, cwd string }{
		{"broadcast", "claude", "echo <!channel> <!here> <!everyone>", "/p"},
		{"bare words", "claude @here", "echo @channel hi @everyone", "/p @channel"},
		{"mention", "<@U024BE7LH>", "echo <@U024BE7LH> <#C123|general> <!subteam^S1>", "/p"},
		{"forged link", "claude", "echo <http://evil.example|https://github.com/ok>", "<https://evil|/home/me/project>"},
		{"entities", "claude", "echo &lt;!channel&gt; &amp;", "/p"},
		{"fence breakout", "claude", "echo ```\n*bold* <!channel>\n```", "/p"},
		{"trailing backtick", "claude", "echo `", "/p"},
		{"bidi", "claude", "echo \u202egnp.exe", "/p"},
	}
	for _, tc := range attacks {
		t.Run(tc.name, func(t *testing.T) {
			a := testApproval("A1")
			a.Agent, a.Cwd = tc.agent, tc.cwd
			setCommand(a, tc.command)
			a.Evaluation.Always = []string{tc.command}
			a.Evaluation.AlwaysRules = []gate.AlwaysPattern{{Tool: "Bash", Pattern: tc.command}}
			a.Evaluation.Reason = tc.command
			for _, final := range []bool{false, true} {
				b := *a
				if final {
					now := t0
					b.Status, b.DecidedBy, b.Via, b.Reason, b.DecidedAt = gate.StatusDenied, "<!channel>", "telegram", tc.command, &now
				}
				v := render(gate.View{Approval: &b}, t0)
				texts := append(mrkdwnTexts(t, v.Blocks), v.Fallback)
				for _, s := range texts {
					if strings.ContainsAny(s, "<>") {
						t.Errorf("raw < or > in %q", s)
					}
					if broadcast.MatchString(s) {
						t.Errorf("broadcast word in %q", s)
					}
					if strings.Contains(s, "\u202e") {
						t.Errorf("bidi control in %q", s)
					}
					// Every & starts an entity we made.
					if strings.Count(s, "&") != strings.Count(s, "&amp;")+strings.Count(s, "&lt;")+strings.Count(s, "&gt;") {
						t.Errorf("bare & in %q", s)
					}
					if strings.Contains(s, "```") && strings.Count(s, "```") != 2 {
						t.Errorf("code fence broken: %q", s)
					}
				}
			}
		})
	}
}

func TestOutcomeShowsSlackDeciderAsMention(t *testing.T) {
	now := t0
	a := testApproval("A1")
	a.Status, a.DecidedAt = gate.StatusApproved, &now
	a.DecidedBy, a.Via = "<@UAPPROVER>", "slack"
	if got := outcomeText(a); !strings.Contains(got, "by <@UAPPROVER> via Slack") {
		t.Errorf("slack decider: %q", got)
	}
	for _, by := range []string{"<!channel>", "<@UAPPROVER|x>", "<@UAPPROVER> <!here>"} {
		a.DecidedBy = by
		if got := outcomeText(a); strings.ContainsAny(got, "<>") {
			t.Errorf("decider %q rendered raw: %q", by, got)
		}
	}
	a.DecidedBy, a.Via = "<@UAPPROVER>", "telegram"
	if got := outcomeText(a); strings.ContainsAny(got, "<>") {
		t.Errorf("non-slack decider rendered as a mention: %q", got)
	}
}

func TestButtonValueRoundTrip(t *testing.T) {
	a := testApproval("A1")
	id, d, ok := parseButtonValue(buttonValue(a))
	if !ok || id != "A1" || !strings.HasPrefix(a.Digest, d) || len(d) != prompt.DigestLen {
		t.Fatalf("round trip: %q %q %v", id, d, ok)
	}
	for _, bad := range []string{"", "A1", "|abc", "A1|ab|cd"} {
		if _, _, ok := parseButtonValue(bad); ok {
			t.Errorf("parseButtonValue(%q) accepted", bad)
		}
	}
}

func TestRenderFitsBlockKitLimits(t *testing.T) {
	a := testApproval("A1")
	long := strings.Repeat("<&>", 3000)
	a.Agent, a.Cwd, a.SessionID = long, long, long
	setCommand(a, long)
	a.Evaluation.Always = []string{long}
	a.Evaluation.AlwaysRules = []gate.AlwaysPattern{{Tool: "Bash", Pattern: long}}
	v := render(gate.View{Approval: a}, t0.Add(time.Minute))
	raw, _ := json.Marshal(v.Blocks)
	var blocks []map[string]any
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if txt, ok := b["text"].(map[string]any); ok {
			if n := len([]rune(txt["text"].(string))); n > maxSectionText {
				t.Errorf("%s text of %d characters", b["type"], n)
			}
		}
		if fs, ok := b["fields"].([]any); ok {
			for _, f := range fs {
				if n := len([]rune(f.(map[string]any)["text"].(string))); n > maxFieldText {
					t.Errorf("field of %d characters", n)
				}
			}
		}
		if b["type"] == "actions" {
			for _, el := range b["elements"].([]any) {
				el := el.(map[string]any)
				if n := len([]rune(el["text"].(map[string]any)["text"].(string))); n > maxButtonText {
					t.Errorf("button label of %d characters", n)
				}
				if c, ok := el["confirm"].(map[string]any); ok {
					if n := len([]rune(c["text"].(map[string]any)["text"].(string))); n > maxConfirmText {
						t.Errorf("confirm text of %d characters", n)
					}
				}
			}
		}
	}
	if !v.Cut {
		t.Error("long body not marked as cut")
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"<!channel>", "@here", "&amp;", "```", "a`b``c```", "<http://x|y>", "＠channel", "@channelx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Escape(s), EscapeCode(s), codeBlock(EscapeCode(s))} {
			if strings.ContainsAny(out, "<>") {
				t.Fatalf("%q -> %q has < or >", s, out)
			}
			if broadcast.MatchString(out) {
				t.Fatalf("%q -> %q has a broadcast word", s, out)
			}
		}
		inner := EscapeCode(s)
		if strings.Contains(inner, "``") {
			t.Fatalf("%q -> %q keeps consecutive backticks", s, inner)
		}
		if cb := codeBlock(inner); strings.Count(cb, "```") != 2 {
			t.Fatalf("%q -> %q: fence broken", s, cb)
		}
	})
}

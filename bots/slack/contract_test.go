package slack

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"approvalbot/bots/frontendtest"
	"approvalbot/bots/slacktest"
	"approvalbot/gate/gatetest"
	"approvalbot/prompt"
)

// TestContract runs the frontend contract (bots/frontendtest) against the
// bot over Socket Mode on the fake Slack, behind a proxy that holds, drops
// and records posts.
func TestContract(t *testing.T) {
	frontendtest.Run(t, func(t *testing.T) frontendtest.Driver {
		fs := slacktest.New(t)
		return &contractDriver{fs: fs, proxy: frontendtest.NewProxy(t, fs.APIURL()), logs: &frontendtest.LogBuffer{}}
	})
}

type contractDriver struct {
	fs    *slacktest.Server
	proxy *frontendtest.Proxy
	logs  *frontendtest.LogBuffer
	env   *gatetest.Env
	conns int
	stop  func()
}

var contractUsers = map[frontendtest.User]string{frontendtest.Approver: approverID, frontendtest.Stranger: strangerID}

// contractActions are the action ids of the prompt's choices.
var contractActions = map[prompt.ChoiceKind]string{prompt.ChoiceApprove: actApprove, prompt.ChoiceAlways: actAlways,
	prompt.ChoiceDeny: actDeny, prompt.ChoiceDenyReason: actDenyReason, prompt.ChoiceStop: actStop}

const contractBotToken, contractAppToken = "xoxb-contract-SECRET-bot", "xapp-contract-SECRET-app"

func (d *contractDriver) Name() string             { return Name }
func (d *contractDriver) Notifies() bool           { return true }
func (d *contractDriver) Skips() map[string]string { return nil }
func (d *contractDriver) Secrets() []string {
	return []string{contractBotToken, contractAppToken, secret}
}
func (d *contractDriver) Logs() string { return d.logs.String() }

func (d *contractDriver) Start(t *testing.T, s frontendtest.Setup) {
	cfg := testConfig(d.fs, true)
	cfg.BotToken, cfg.AppToken, cfg.APIURL = contractBotToken, contractAppToken, d.proxy.URL+"/"
	cfg.Approvers, cfg.NoGroups, cfg.Now = nil, false, s.Env.Clock.Now
	for _, u := range s.Approvers {
		cfg.Approvers = append(cfg.Approvers, contractUsers[u])
	}
	for range s.RateLimit {
		d.fs.RateLimit("chat.postMessage", 1)
	}
	d.proxy.Drop("/chat.postMessage", s.Drops)
	bot, err := New(cfg, s.Env.G, slog.New(slog.NewTextHandler(d.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	s.Env.G.AddNotifier(bot)
	d.env = s.Env
	d.stop = frontendtest.Serve(t, s.Env.G, bot.Run, bot.Close)
	d.conns++
	if err := d.fs.AwaitConnections(frontendtest.Context(t), d.conns); err != nil {
		t.Fatal(err)
	}
}

func (d *contractDriver) Stop(*testing.T) { d.stop() }

func (d *contractDriver) Hold(*testing.T) (<-chan struct{}, func()) {
	return d.proxy.Hold("/chat.postMessage")
}

// Prompts: every prompt of id as posted, then the messages as they are now.
func (d *contractDriver) Prompts(t *testing.T, id string) []frontendtest.Prompt {
	var out []frontendtest.Prompt
	for _, ex := range d.proxy.Exchanges("/chat.postMessage") {
		var res struct {
			OK bool   `json:"ok"`
			TS string `json:"ts"`
		}
		p, err := url.ParseQuery(string(ex.Request))
		if err != nil || json.Unmarshal(ex.Response, &res) != nil || !res.OK {
			continue
		}
		m := slacktest.Message{Channel: p.Get("channel"), TS: res.TS, ThreadTS: p.Get("thread_ts"), Text: p.Get("text"), Blocks: p.Get("blocks")}
		if v, ok := contractVersion(t, m, id); ok {
			out = append(out, v)
		}
	}
	for _, m := range d.fs.Snapshot().Messages {
		if v, ok := contractVersion(t, m, id); ok {
			out = append(out, v)
		}
	}
	return out
}

// contractVersion is m as a version of the prompt of id, if it is one.
func contractVersion(t *testing.T, m slacktest.Message, id string) (frontendtest.Prompt, bool) {
	if m.ThreadTS != "" || m.Blocks == "" {
		return frontendtest.Prompt{}, false
	}
	text := blockTexts(t, m.Blocks)
	if !strings.Contains(text, "*ID*\n"+id) {
		return frontendtest.Prompt{}, false
	}
	v := frontendtest.Prompt{Message: m.TS, Text: text, Raw: m}
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(m.Blocks), &blocks); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		for _, el := range b.Elements {
			for k, act := range contractActions {
				if el.ActionID == act && strings.HasPrefix(el.Value, id+"|") {
					v.Choices = append(v.Choices, k)
				}
			}
		}
	}
	v.Live = len(v.Choices) > 0
	return v, true
}

func (d *contractDriver) Press(t *testing.T, p frontendtest.Press) frontendtest.Answer {
	t.Helper()
	m := frontendtest.Target(t, d, p).Raw.(slacktest.Message)
	value := buttonOf(t, m.Blocks, contractActions[p.Choice.Kind])
	if p.Tamper {
		id, digest, _ := parseButtonValue(value)
		value = id + "|" + frontendtest.Tamper(digest)
	}
	if p.Choice.Kind != prompt.ChoiceAlways {
		return d.pressAction(t, m, p, contractActions[p.Choice.Kind], value, nil)
	}
	scope := actScopePrefix + p.Choice.Scope
	stepShown := func(s slacktest.Snapshot) bool {
		for _, x := range s.Messages {
			if x.TS == m.TS && strings.Contains(x.Blocks, `"action_id":"`+scope+`"`) {
				return true
			}
		}
		return false
	}
	if ans := d.pressAction(t, m, p, actAlways, value, stepShown); ans.Text != "" {
		return ans
	}
	return d.pressAction(t, m, p, scope, value, nil)
}

// pressAction presses the button with action id act and value on m as
// p.As, and waits until the presser is told something, the approval is
// decided, or step holds.
func (d *contractDriver) pressAction(t *testing.T, m slacktest.Message, p frontendtest.Press, act, value string, step func(slacktest.Snapshot) bool) frontendtest.Answer {
	t.Helper()
	user := contractUsers[p.As]
	told := func(s slacktest.Snapshot) int {
		n := 0
		for _, e := range s.Ephemerals {
			if e.User == user {
				n++
			}
		}
		return n
	}
	before := told(d.fs.Snapshot())
	id, err := d.fs.SendInteractive(map[string]any{
		"type": "block_actions", "trigger_id": "1337.42.contract",
		"user":      map[string]any{"id": user},
		"channel":   map[string]any{"id": m.Channel},
		"container": map[string]any{"type": "message", "channel_id": m.Channel, "message_ts": m.TS},
		"message":   map[string]any{"ts": m.TS},
		"actions":   []any{map[string]any{"type": "button", "action_id": act, "block_id": actionsBlockID, "value": value}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := frontendtest.Context(t)
	if _, err := d.fs.AwaitAck(ctx, id); err != nil {
		t.Fatal(err)
	}
	var ans frontendtest.Answer
	err = d.fs.Await(ctx, func(s slacktest.Snapshot) bool {
		if told(s) > before {
			for _, e := range s.Ephemerals {
				if e.User == user {
					ans.Text = e.Text
				}
			}
			return true
		}
		if step != nil {
			return step(s)
		}
		a, err := d.env.G.Get(ctx, p.ID)
		return err == nil && a.Status.Final()
	})
	if err != nil {
		t.Fatalf("pressing %s on %s had no effect: %v", act, p.ID, err)
	}
	return ans
}

// Full reads the thread the prompt's full text is posted in.
func (d *contractDriver) Full(t *testing.T, id string) string {
	t.Helper()
	d.env.Shown(t, id, Name) // recorded once the thread is posted
	m := frontendtest.Newest(t, d, id).Raw.(slacktest.Message)
	// Each part is a heading line and a code block; a person reads the
	// blocks one after the other.
	var b strings.Builder
	for _, x := range d.fs.Snapshot().Messages {
		if x.ThreadTS == m.TS {
			_, part, _ := strings.Cut(x.Text, "\n")
			part = strings.TrimSuffix(strings.TrimPrefix(part, "```"), "```")
			b.WriteString(strings.Trim(part, zwsp))
		}
	}
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(b.String())
}

// TestAlwaysStepRefusesAnotherDigest: Always on a button made for another
// input shows no scope step; the presser is told, the prompt stays as it was.
func TestAlwaysStepRefusesAnotherDigest(t *testing.T) {
	e := start(t, true)
	a := e.add("make deploy")
	m := e.notify(a)
	e.interact(press(approverID, actAlways, a.ID+"|"+frontendtest.Tamper(prompt.DigestPrefix(a))))
	snap := e.await("ephemeral", func(s slacktest.Snapshot) bool { return len(s.Ephemerals) == 1 })
	if !strings.Contains(snap.Ephemerals[0].Text, "no longer matches") {
		t.Fatalf("answer %+v", snap.Ephemerals)
	}
	if got := snap.Messages[0]; got.Updates != 0 || got.Blocks != m.Blocks {
		t.Fatalf("the prompt changed: %d updates", got.Updates)
	}
	e.pending(a.ID)
}

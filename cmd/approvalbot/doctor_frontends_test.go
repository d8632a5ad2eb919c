package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"approvalbot/bots/slacktest"
	"approvalbot/bots/telegramtest"
	"approvalbot/config"
)

// TestFrontendProbes: each frontend's Probe, through doctor's interface,
// against the emulators: what it confirms, its failure and fix, and never
// a token in any of them.
func TestFrontendProbes(t *testing.T) {
	const tgToken, slBot, slApp = "4242:tg-SECRET", "xoxb-sl-SECRET", "xapp-sl-SECRET"
	tg := telegramtest.New(t, tgToken)
	tgKicked := telegramtest.New(t, tgToken)
	tgKicked.Fail("getChat", telegramtest.Fault{Code: 403, Description: "Forbidden: bot was kicked from the group chat"})
	sl := slacktest.New(t)
	slBad := slacktest.New(t)
	slBad.Fail("auth.test", "invalid_auth")
	slNoChannel := slacktest.New(t)
	slNoChannel.Fail("conversations.info", "channel_not_found")
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream down", http.StatusBadGateway)
	}))
	defer broken.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	telegramAt := func(url string, chat int64) config.Settings {
		return config.Settings{TelegramToken: tgToken, TelegramAPIURL: url, TelegramChatID: chat}
	}
	slackAt := func(url, channel string) config.Settings {
		return config.Settings{SlackBotToken: slBot, SlackAppToken: slApp, SlackChannel: channel, SlackAPIURL: url}
	}

	tests := []struct {
		name   string
		s      config.Settings
		passed []string
		fail   string // "" when every step passes
		fix    string
	}{
		{"telegram works", telegramAt(tg.APIURL(), 0),
			[]string{"token belongs to @approval_test_bot", "paired with /pair CODE"}, "", ""},
		{"telegram bad token", config.Settings{TelegramToken: "4242:wrong-SECRET", TelegramAPIURL: tg.APIURL()},
			nil, "getMe refused the token: 401 Unauthorized", "APPROVALBOT_TELEGRAM_TOKEN"},
		{"telegram unreachable", telegramAt(gone.URL, 0),
			nil, "getMe: request failed:", "check network access to " + gone.URL},
		{"telegram kicked from the chat", telegramAt(tgKicked.APIURL(), -100),
			[]string{"token belongs to @"}, "chat -100 is not reachable: 403 Forbidden", "APPROVALBOT_TELEGRAM_CHAT_ID"},
		{"slack works", slackAt(sl.APIURL(), "C123"),
			[]string{"bot @approvalbot in workspace Fake Team", "the bot is a member of C123"}, "", ""},
		{"slack not a member", slackAt(sl.APIURL(), "G999"),
			[]string{"bot @approvalbot"}, "the bot is not a member of G999", "/invite @approvalbot"},
		{"slack no such channel", slackAt(slNoChannel.APIURL(), "C404"),
			[]string{"bot @approvalbot"}, "channel C404: channel_not_found", "channel id (not its name)"},
		{"slack bad token", slackAt(slBad.APIURL(), "C123"),
			nil, "auth.test refused the bot token: invalid_auth", "APPROVALBOT_SLACK_BOT_TOKEN"},
		{"slack server error", slackAt(broken.URL+"/", "C123"),
			nil, "auth.test: HTTP 502 from the Web API", "check network access to " + broken.URL},
		{"slack unreachable", slackAt(gone.URL+"/", "C123"),
			nil, "auth.test: request failed:", "APPROVALBOT_SLACK_API_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probes, err := frontendProbes(tt.s)
			if err != nil || len(probes) != 1 {
				t.Fatalf("frontendProbes = %d, %v", len(probes), err)
			}
			defer closeAll(probes)
			passed, err := probes[0].Probe(context.Background())
			if len(passed) != len(tt.passed) {
				t.Fatalf("passed %q, want %q (err %v)", passed, tt.passed, err)
			}
			texts := passed
			for i, w := range tt.passed {
				if !strings.Contains(passed[i], w) {
					t.Errorf("passed[%d] = %q, want %q", i, passed[i], w)
				}
			}
			var f fixer
			switch {
			case tt.fail == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.fail != "" && !errors.As(err, &f):
				t.Fatalf("err = %v (%T), want one with a fix", err, err)
			case tt.fail != "":
				texts = append(texts, err.Error(), f.Fix())
				if !strings.Contains(err.Error(), tt.fail) || !strings.Contains(f.Fix(), tt.fix) {
					t.Errorf("err %q, fix %q; want %q, %q", err, f.Fix(), tt.fail, tt.fix)
				}
				if errors.Unwrap(err) != nil {
					t.Errorf("err wraps %v, which may hold a token", errors.Unwrap(err))
				}
			}
			for _, s := range texts {
				if strings.Contains(s, "SECRET") {
					t.Errorf("%q shows a token", s)
				}
			}
		})
	}
}

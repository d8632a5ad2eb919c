package main

import (
	"context"
	"errors"

	"approvalbot/bots/slack"
	"approvalbot/bots/telegram"
	"approvalbot/config"
)

// frontendProbe is a chat frontend that checks its own set-up with its
// platform: *telegram.Bot and *slack.Bot, built without a gate.
type frontendProbe interface {
	// Name names the frontend in the report ("telegram").
	Name() string
	// Probe asks the platform whether the token works and whether prompts
	// reach their destination, changing nothing. passed lists what was
	// confirmed, in order; err is the first failure, and says what to do
	// when it has a Fix() string method. No text holds a token.
	Probe(ctx context.Context) (passed []string, err error)
	// Close releases the frontend; call it once probing is done.
	Close() error
}

// fixer is a probe error that says what to do about it.
type fixer interface{ Fix() string }

// frontendProbes builds the configured frontends, for probing only.
func frontendProbes(s config.Settings) ([]frontendProbe, error) {
	var out []frontendProbe
	if s.TelegramToken != "" {
		b, err := telegram.New(telegram.Config{Token: s.TelegramToken, ChatID: s.TelegramChatID, APIURL: s.TelegramAPIURL}, nil, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if s.SlackBotToken != "" {
		b, err := slack.New(slack.Config{BotToken: s.SlackBotToken, AppToken: s.SlackAppToken, Channel: s.SlackChannel,
			SigningSecret: s.SlackSigningSecret, APIURL: s.SlackAPIURL}, nil, nil)
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func closeAll(ps []frontendProbe) {
	for _, p := range ps {
		p.Close()
	}
}

// checkFrontends probes each configured chat frontend, each within
// doctorTimeout.
func checkFrontends(ctx context.Context, s config.Settings) []check {
	probes, err := frontendProbes(s)
	if err != nil {
		// config.Load has checked the same settings, so this is a bug
		// rather than a setting to fix; the error names no token.
		return []check{{name: "frontends", msg: err.Error()}}
	}
	defer closeAll(probes)
	if len(probes) == 0 {
		return []check{{name: "frontends", ok: true,
			msg: "none configured: decide with `approvalbot watch`, `approvalbot approve/deny` or the API"}}
	}
	var out []check
	for _, p := range probes {
		out = append(out, probeChecks(ctx, p)...)
	}
	return out
}

// probeChecks runs one probe: a line per confirmed step, then the failure.
func probeChecks(ctx context.Context, p frontendProbe) []check {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	passed, err := p.Probe(ctx)
	var out []check
	for _, msg := range passed {
		out = append(out, check{name: p.Name(), ok: true, msg: msg})
	}
	if err != nil {
		c := check{name: p.Name(), msg: err.Error()}
		var f fixer
		if errors.As(err, &f) {
			c.fix = f.Fix()
		}
		out = append(out, c)
	}
	return out
}

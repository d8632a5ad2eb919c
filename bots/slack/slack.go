// Package slack is the Slack frontend: it posts approval prompts to a
// channel in Block Kit, takes decisions from approvers' button presses and
// the deny-reason modal, edits the message once the approval is final, and
// answers the /approvalbot slash command and replies in words in a prompt's
// thread. Interactivity and events arrive over Socket Mode (the default: no
// public URL) or over HTTP, each request then verified against the app's
// signing secret.
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"approvalbot/bots/outbox"
	"approvalbot/gate"
)

// Name is the frontend's name in MessageRefs, logs and Decision.Via.
const Name = "slack"

// Slack's documented limits for the methods we call
// (https://api.slack.com/methods/chat.postMessage#rate_limiting: about one
// message per second per channel, short bursts allowed; chat.update is
// Tier 3, about 50 a minute).
const (
	perChannelInterval = time.Second
	overallInterval    = 200 * time.Millisecond
	backoffMin         = time.Second
	backoffMax         = time.Minute
	ephemeralTimeout   = 10 * time.Second
	// webAPITimeout bounds one Web API request (Slack answers in well under
	// a second; a request hung past this is retried).
	webAPITimeout = 30 * time.Second
)

// Config holds the Slack settings (APPROVALBOT_SLACK_*).
type Config struct {
	// BotToken is the bot user token (xoxb-...), for the Web API.
	BotToken string
	// AppToken is the app-level token (xapp-...) with connections:write;
	// with it, interactivity arrives over Socket Mode.
	AppToken string
	// Channel is the channel id prompts are posted to.
	Channel string
	// Approvers are the Slack user ids allowed to decide. Empty: nobody.
	Approvers []string
	// SigningSecret verifies HTTP interactivity and slash-command requests.
	SigningSecret string
	// APIURL is the Web API root (default https://slack.com/api/); tests
	// point it at a fake server. It must end in a slash.
	APIURL string
	// NoGroups shows every call in a message of its own, never a
	// session's pending calls grouped in one (tests of single prompts).
	NoGroups bool
	// Limits overrides the send pacing (tests); zero values take Slack's.
	Limits outbox.Limits
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
}

// Gate is the part of *gate.Gate the frontend uses.
type Gate interface {
	Decide(ctx context.Context, id string, d gate.Decision) (*gate.Approval, error)
	DecideBatch(ctx context.Context, id, digest string, d gate.Decision) ([]gate.BatchResult, error)
	Get(ctx context.Context, id string) (*gate.Approval, error)
	List(ctx context.Context, status gate.Status) ([]*gate.Approval, error)
	Rules(ctx context.Context, agent string) ([]gate.AlwaysRule, error)
	RemoveRule(ctx context.Context, id, by string) (gate.AlwaysRule, error)
	SetMode(ctx context.Context, agent string, m gate.Mode, by string) error
	// Value and SetValue keep what each prompt message shows, for replies
	// in words (gate.ErrNotFound for a key never set).
	Value(ctx context.Context, key string) (string, error)
	SetValue(ctx context.Context, key, value string) error
}

// Bot is the Slack frontend. It implements gate.Notifier.
type Bot struct {
	cfg       Config
	g         Gate
	api       *slack.Client
	out       *outbox.Outbox
	approvers map[string]bool
	logger    *slog.Logger
}

// New returns a Slack frontend for g. Call Run to receive interactions (over
// Socket Mode when cfg.AppToken is set) and Close when done.
func New(cfg Config, g Gate, logger *slog.Logger) (*Bot, error) {
	if cfg.BotToken == "" {
		return nil, errors.New("slack: bot token is required")
	}
	if cfg.Channel == "" {
		return nil, errors.New("slack: channel is required")
	}
	if cfg.AppToken == "" && cfg.SigningSecret == "" {
		return nil, errors.New("slack: an app token (Socket Mode) or a signing secret (HTTP interactivity) is required")
	}
	if cfg.AppToken != "" && !strings.HasPrefix(cfg.AppToken, "xapp-") {
		return nil, errors.New("slack: the app token must be an app-level token (xapp-...)")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("frontend", Name)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	lim := cfg.Limits
	if lim == (outbox.Limits{}) {
		lim = outbox.Limits{PerDest: perChannelInterval, Overall: overallInterval, BackoffMin: backoffMin, BackoffMax: backoffMax}
	}
	// A Web API request that hangs must fail (and be retried through the
	// outbox), not hold the channel's queue until a restart.
	opts := []slack.Option{slack.OptionHTTPClient(&http.Client{Timeout: webAPITimeout})}
	if cfg.APIURL != "" {
		u := cfg.APIURL
		if !strings.HasSuffix(u, "/") {
			u += "/"
		}
		opts = append(opts, slack.OptionAPIURL(u))
	}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	b := &Bot{
		cfg:       cfg,
		g:         g,
		api:       slack.New(cfg.BotToken, opts...),
		out:       outbox.New(lim, logger),
		approvers: make(map[string]bool, len(cfg.Approvers)),
		logger:    logger,
	}
	for _, id := range cfg.Approvers {
		if id = strings.TrimSpace(id); id != "" {
			b.approvers[id] = true
		}
	}
	return b, nil
}

// Name implements gate.Notifier.
func (b *Bot) Name() string { return Name }

// Close stops the send queue; sends still queued fail with outbox.ErrClosed.
func (b *Bot) Close() error { return b.out.Close() }

// Run receives interactions until ctx ends. With an app token it keeps a
// Socket Mode connection (reconnecting on drops); without one, interactions
// come through Handler and Run only waits for ctx.
func (b *Bot) Run(ctx context.Context) error {
	if b.cfg.AppToken == "" {
		<-ctx.Done()
		return nil
	}
	return b.runSocket(ctx)
}

func (b *Bot) isApprover(user string) bool { return user != "" && b.approvers[user] }

// sendErr classifies a Web API error for the outbox: a rate limit waits
// for Slack's Retry-After, an API error ("channel_not_found",
// "invalid_blocks") is permanent, anything else (network, 5xx) is retried.
func sendErr(err error) error {
	if err == nil {
		return nil
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return &outbox.RetryAfter{D: rl.RetryAfter, Err: err}
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return outbox.Permanent(err)
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) && sc.Code >= 400 && sc.Code < 500 {
		return outbox.Permanent(err)
	}
	return err
}

func (b *Bot) dest() outbox.Dest { return outbox.Dest{Key: b.cfg.Channel} }

// ephemeral tells one user something, in the channel, only they can see it.
func (b *Bot) ephemeral(ctx context.Context, channel, user, text string) {
	if channel == "" {
		channel = b.cfg.Channel
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ephemeralTimeout)
	defer cancel()
	_, err := b.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(text, false),
		slack.MsgOptionBlocks(slack.NewSectionBlock(mrkdwn(text), nil, nil)))
	if err != nil {
		b.logger.Warn("ephemeral message failed", "user", user, "err", fmt.Errorf("chat.postEphemeral: %w", err))
	}
}

// Package telegram is approvalbot's Telegram frontend: it shows pending
// approvals in a chat with Approve / Always / Deny / Deny with reason / Stop
// buttons, takes the presses of configured approvers, and edits the
// messages to show the outcome, wherever the decision was made.
//
// Everything it knows lives in the gate (approvals, where each prompt was
// sent, the paired chat, the update offset, pending reason replies), so
// after a restart old buttons keep working and no update is handled twice.
// Sends go through an outbox paced to Telegram's limits.
package telegram

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/backoff"
	"approvalbot/bots/outbox"
	"approvalbot/gate"
)

// Name is the frontend's name in MessageRefs, Decision.Via and logs.
const Name = "telegram"

// Keys of the values the bot keeps in the gate's value store.
const (
	keyOffset       = "telegram.offset"  // next getUpdates offset
	keyChat         = "telegram.chat"    // the chat paired with /pair
	keyReasonPrefix = "telegram.reason." // + chat + "." + ForceReply message id
)

// DefaultAPIURL is the Bot API's base URL.
const DefaultAPIURL = "https://api.telegram.org"

// Config is the Telegram frontend's settings.
type Config struct {
	// Token is the bot token from @BotFather. Never logged.
	Token string
	// ChatID is the chat prompts go to; 0 means the chat paired with /pair.
	ChatID int64
	// Approvers are the user ids allowed to decide. Empty: nobody may.
	Approvers []int64
	// APIURL is the Bot API base URL (DefaultAPIURL when empty); methods
	// are called at {APIURL}/bot{token}/{method}.
	APIURL string
	// PollTimeout is the getUpdates long-poll timeout (default 50s).
	PollTimeout time.Duration
	// WebhookURL, if set, makes Run register a webhook instead of polling;
	// updates then arrive at WebhookHandler. WebhookSecret is required
	// with it and is checked on every request.
	WebhookURL    string
	WebhookSecret string
	// NoGroups shows every call in a message of its own, never a
	// session's pending calls grouped in one (tests of single prompts).
	NoGroups bool
	// Limits overrides Telegram's sending limits (tests).
	Limits *outbox.Limits
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
}

// Gate is what the frontend needs from the gate (*gate.Gate implements it).
type Gate interface {
	Get(ctx context.Context, id string) (*gate.Approval, error)
	List(ctx context.Context, status gate.Status) ([]*gate.Approval, error)
	Decide(ctx context.Context, id string, d gate.Decision) (*gate.Approval, error)
	DecideBatch(ctx context.Context, id, digest string, d gate.Decision) ([]gate.BatchResult, error)
	Rules(ctx context.Context, agent string) ([]gate.AlwaysRule, error)
	RemoveRule(ctx context.Context, id, by string) (gate.AlwaysRule, error)
	SetMode(ctx context.Context, agent string, m gate.Mode, by string) error
	Value(ctx context.Context, key string) (string, error)
	SetValue(ctx context.Context, key, value string) error
}

// Bot is the Telegram frontend. It implements gate.Notifier.
type Bot struct {
	cfg       Config
	g         Gate
	logger    *slog.Logger
	api       *tgbotapi.BotAPI
	http      *http.Client
	out       *outbox.Outbox
	replies   *replies // command replies, behind prompts (replies.go)
	approvers map[int64]bool
	username  string // the bot's own @name, to accept /cmd@name

	mu        sync.Mutex
	chatID    int64 // 0 until configured or paired
	chatReady chan struct{}
	chatTried bool
	code      string
	offset    int             // next update id to handle (webhook dedup)
	runCtx    context.Context // Run's context, for webhook requests

	tasks sync.WaitGroup // background work started by updates (/pending)
}

// New returns the bot. It does not touch the network; Run does.
func New(cfg Config, g Gate, logger *slog.Logger) (*Bot, error) {
	if cfg.Token == "" {
		return nil, errors.New("telegram: no bot token")
	}
	if cfg.WebhookURL != "" && cfg.WebhookSecret == "" {
		return nil, errors.New("telegram: a webhook needs a secret token")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = 50 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("frontend", Name)
	limits := DefaultLimits()
	if cfg.Limits != nil {
		limits = *cfg.Limits
	}
	client := &http.Client{Timeout: cfg.PollTimeout + 15*time.Second}
	api := &tgbotapi.BotAPI{Token: cfg.Token, Client: client, Buffer: 100}
	api.SetAPIEndpoint(strings.TrimSuffix(cfg.APIURL, "/") + "/bot%s/%s")
	b := &Bot{
		cfg: cfg, g: g, logger: logger, api: api, http: client,
		out:       outbox.New(limits, logger),
		replies:   newReplies(),
		approvers: map[int64]bool{},
		chatID:    cfg.ChatID,
		chatReady: make(chan struct{}),
		code:      newCode(),
	}
	for _, id := range cfg.Approvers {
		b.approvers[id] = true
	}
	if cfg.ChatID != 0 {
		close(b.chatReady)
	}
	return b, nil
}

// Name is "telegram".
func (b *Bot) Name() string { return Name }

// PairingCode is the one-time code an approver sends as "/pair CODE" to
// bind a chat; "" when the chat is fixed by Config.ChatID.
func (b *Bot) PairingCode() string {
	if b.cfg.ChatID != 0 {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.code
}

// Close stops the outbox. Call after Run has returned.
func (b *Bot) Close() error {
	b.tasks.Wait()
	return b.out.Close()
}

func (b *Bot) now() time.Time { return b.cfg.Now() }

// newCode returns a pairing code: 10 characters from an alphabet without
// look-alikes (50 bits).
func newCode() string {
	const alphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
	var buf [10]byte
	rand.Read(buf[:])
	for i := range buf {
		buf[i] = alphabet[int(buf[i])%len(alphabet)]
	}
	return string(buf[:])
}

// chat returns the chat prompts go to, loading a pairing from the store the
// first time; 0 if none.
func (b *Bot) chat(ctx context.Context) int64 {
	b.mu.Lock()
	if b.chatID != 0 || b.chatTried {
		id := b.chatID
		b.mu.Unlock()
		return id
	}
	b.mu.Unlock()
	v, err := b.g.Value(ctx, keyChat)
	if err != nil && !errors.Is(err, gate.ErrNotFound) {
		b.logger.Error("load paired chat", "err", err)
		return 0 // try again next time
	}
	id, _ := strconv.ParseInt(v, 10, 64)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.chatTried = true
	if b.chatID == 0 && id != 0 {
		b.chatID = id
		close(b.chatReady)
	}
	return b.chatID
}

// waitChat waits until there is a chat to send to.
func (b *Bot) waitChat(ctx context.Context) (int64, error) {
	if id := b.chat(ctx); id != 0 {
		return id, nil
	}
	b.logger.Warn("no Telegram chat yet: send /pair CODE to the bot from an approver's account")
	select {
	case <-b.chatReady:
		return b.chat(ctx), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// setChat pairs chat and retires the code.
func (b *Bot) setChat(ctx context.Context, chat int64) error {
	if err := b.g.SetValue(ctx, keyChat, strconv.FormatInt(chat, 10)); err != nil {
		return fmt.Errorf("store paired chat: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	wasZero := b.chatID == 0
	b.chatID = chat
	b.chatTried = true
	b.code = newCode()
	if wasZero {
		close(b.chatReady)
	}
	return nil
}

func dest(chat int64) outbox.Dest {
	return outbox.Dest{Key: strconv.FormatInt(chat, 10), Group: chat < 0}
}

// Run receives updates until ctx ends: by long polling, or, with a
// WebhookURL, by registering the webhook (updates then come to
// WebhookHandler). It returns nil when ctx ends.
func (b *Bot) Run(ctx context.Context) error {
	defer b.tasks.Wait()
	b.mu.Lock()
	b.runCtx = ctx
	b.mu.Unlock()
	b.chat(ctx)
	if u, err := b.getMe(ctx); err != nil {
		b.logger.Warn("getMe failed; commands addressed as /cmd@bot are ignored until it works", "err", err)
	} else {
		b.mu.Lock()
		b.username = u.UserName
		b.mu.Unlock()
	}
	offset, err := b.loadOffset(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting: not a failure
		}
		return err
	}
	if b.cfg.WebhookURL != "" {
		return b.runWebhook(ctx)
	}
	if _, err := b.rawRequest(ctx, "deleteWebhook", tgbotapi.Params{}); err != nil {
		b.logger.Warn("deleteWebhook failed", "err", err)
	}
	return b.poll(ctx, offset)
}

func (b *Bot) getMe(ctx context.Context) (tgbotapi.User, error) {
	u, err := b.apiFor(ctx).GetMe()
	return u, b.classify("getMe", err)
}

func (b *Bot) loadOffset(ctx context.Context) (int, error) {
	v, err := b.g.Value(ctx, keyOffset)
	if errors.Is(err, gate.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("load telegram update offset: %w", err)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		b.logger.Warn("bad stored update offset; starting from Telegram's", "value", v)
		return 0, nil
	}
	b.mu.Lock()
	b.offset = n
	b.mu.Unlock()
	return n, nil
}

// pollBackoff paces getUpdates after a failure that names no delay.
var pollBackoff = backoff.Policy{Min: time.Second, Max: time.Minute}

// minEmptyPoll is the least time between two polls that found nothing.
const minEmptyPoll = 200 * time.Millisecond

// poll is the getUpdates loop.
func (b *Bot) poll(ctx context.Context, offset int) error {
	attempt := 0
	for {
		cfg := tgbotapi.UpdateConfig{Offset: offset, Timeout: int(b.cfg.PollTimeout / time.Second),
			AllowedUpdates: []string{"message", "callback_query"}}
		if cfg.Timeout < 1 {
			cfg.Timeout = 1
		}
		started := time.Now()
		updates, err := b.apiFor(ctx).GetUpdates(cfg)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			err = b.classify("getUpdates", err)
			wait := pollBackoff.Delay(attempt)
			attempt++
			var ra *outbox.RetryAfter
			if errors.As(err, &ra) {
				wait = ra.D
			}
			b.logger.Warn("getUpdates failed", "err", err, "retry_in", wait)
			if backoff.Sleep(ctx, wait) != nil {
				return nil
			}
			continue
		}
		attempt = 0
		if len(updates) == 0 && time.Since(started) < minEmptyPoll {
			// Telegram holds an empty poll for the whole timeout; a server
			// that answers at once (a proxy, an emulator) must not make
			// this loop spin.
			if backoff.Sleep(ctx, minEmptyPoll-time.Since(started)) != nil {
				return nil
			}
		}
		for _, u := range updates {
			if u.UpdateID < offset {
				continue
			}
			b.handle(ctx, u)
			offset = u.UpdateID + 1
			b.commitOffset(ctx, offset)
		}
	}
}

// commitOffset stores the next offset, so a restart does not handle an
// update again.
func (b *Bot) commitOffset(ctx context.Context, offset int) {
	b.mu.Lock()
	if offset > b.offset {
		b.offset = offset
	}
	b.mu.Unlock()
	if err := b.g.SetValue(ctx, keyOffset, strconv.Itoa(offset)); err != nil && ctx.Err() == nil {
		b.logger.Error("store update offset", "err", err)
	}
}

// handle dispatches one update. Errors are answered in the chat or logged;
// nothing here stops the loop.
func (b *Bot) handle(ctx context.Context, u tgbotapi.Update) {
	switch {
	case u.CallbackQuery != nil:
		b.onCallback(ctx, u.CallbackQuery)
	case u.Message != nil:
		b.onMessage(ctx, u.Message)
	}
}

// who names a Telegram user for Decision.By and messages.
func who(u *tgbotapi.User) string {
	if u == nil {
		return "unknown"
	}
	if u.UserName != "" {
		return "@" + u.UserName
	}
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		return "user " + strconv.FormatInt(u.ID, 10)
	}
	return name + " (" + strconv.FormatInt(u.ID, 10) + ")"
}

// authorized reports whether u may decide. An empty approver list
// authorizes nobody.
func (b *Bot) authorized(u *tgbotapi.User) bool {
	return u != nil && b.approvers[u.ID]
}

package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/backoff"
)

// secretHeader carries the webhook's secret_token
// (https://core.telegram.org/bots/api#setwebhook).
const secretHeader = "X-Telegram-Bot-Api-Secret-Token"

// webhookBackoff paces setWebhook retries: Telegram limits that method.
var webhookBackoff = backoff.Policy{Min: 3 * time.Second, Max: time.Minute}

// maxUpdateBody bounds one webhook request body.
const maxUpdateBody = 1 << 20

// runWebhook registers the webhook with its secret and waits for ctx.
func (b *Bot) runWebhook(ctx context.Context) error {
	p := tgbotapi.Params{"url": b.cfg.WebhookURL, "secret_token": b.cfg.WebhookSecret}
	p.AddInterface("allowed_updates", []string{"message", "callback_query"})
	err := backoff.Retry(ctx, webhookBackoff, func(ctx context.Context) error {
		_, err := b.rawRequest(ctx, "setWebhook", p)
		return err
	}, nil, func(err error, _ time.Duration) { b.logger.Error("setWebhook failed", "err", err) })
	if err != nil {
		return nil // ctx ended
	}
	b.logger.Info("webhook registered")
	<-ctx.Done()
	return nil
}

// WebhookHandler receives updates pushed by Telegram when Config.WebhookURL
// is set. A request without the right secret token is refused, so nobody
// else can forge button presses. Updates already handled (Telegram
// redelivers after a failure) are skipped.
func (b *Bot) WebhookHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret := r.Header.Get(secretHeader)
		if b.cfg.WebhookSecret == "" || subtle.ConstantTimeCompare([]byte(secret), []byte(b.cfg.WebhookSecret)) != 1 {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		b.mu.Lock()
		ctx := b.runCtx
		b.mu.Unlock()
		if ctx == nil {
			http.Error(w, "not running", http.StatusServiceUnavailable)
			return
		}
		var u tgbotapi.Update
		if err := json.NewDecoder(io.LimitReader(r.Body, maxUpdateBody)).Decode(&u); err != nil {
			http.Error(w, "bad update", http.StatusBadRequest)
			return
		}
		b.mu.Lock()
		seen := u.UpdateID < b.offset
		b.mu.Unlock()
		if !seen {
			// Work the update starts (edits) outlives this request.
			b.handle(ctx, u)
			b.commitOffset(ctx, u.UpdateID+1)
		}
		w.WriteHeader(http.StatusOK)
	})
}

package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"approvalbot/bots/outbox"
)

// ctxClient makes the library's requests (which carry no context) honour
// one call's context.
type ctxClient struct {
	ctx context.Context
	c   *http.Client
}

func (c ctxClient) Do(req *http.Request) (*http.Response, error) {
	return c.c.Do(req.WithContext(c.ctx))
}

// apiFor returns the library's client bound to ctx. BotAPI holds no lock,
// so a shallow copy per call is safe.
func (b *Bot) apiFor(ctx context.Context) *tgbotapi.BotAPI {
	api := *b.api
	api.Client = ctxClient{ctx: ctx, c: b.http}
	return &api
}

// apiError is a failure with the token removed from its text: the library
// puts the request URL, token included, in transport errors.
type apiError struct {
	msg       string
	code      int // the Bot API's error_code, 0 for transport errors
	retryable bool
}

func (e *apiError) Error() string { return e.msg }

// redact removes the token from s.
func (b *Bot) redact(s string) string {
	if b.cfg.Token == "" {
		return s
	}
	s = strings.ReplaceAll(s, b.cfg.Token, "<token>")
	return strings.ReplaceAll(s, url.PathEscape(b.cfg.Token), "<token>")
}

// classify turns a library error into one the outbox understands: a
// *outbox.RetryAfter for 429, a permanent error for 4xx (retrying a bad
// request cannot help), a retryable one for everything else (network,
// 5xx), always with the token redacted.
func (b *Bot) classify(method string, err error) error {
	if err == nil {
		return nil
	}
	var te *tgbotapi.Error
	if errors.As(err, &te) {
		e := &apiError{msg: fmt.Sprintf("telegram %s: %d %s", method, te.Code, b.redact(te.Message)), code: te.Code}
		switch {
		case te.Code == http.StatusTooManyRequests:
			d := time.Duration(te.RetryAfter) * time.Second
			if d <= 0 {
				d = time.Second
			}
			return &outbox.RetryAfter{D: d, Err: e}
		case te.Code >= 400 && te.Code < 500:
			return outbox.Permanent(e)
		}
		e.retryable = true
		return e
	}
	return &apiError{msg: fmt.Sprintf("telegram %s: %s", method, b.redact(err.Error())), retryable: true}
}

// errDescription returns the Bot API's description of err, or "".
func errDescription(err error) string {
	var e *apiError
	if errors.As(err, &e) {
		return e.msg
	}
	return ""
}

// notModified reports the error Telegram gives for an edit that changes
// nothing, which for us means the edit is already done.
func notModified(err error) bool {
	return strings.Contains(errDescription(err), "message is not modified")
}

// messageGone reports that the message to edit no longer exists.
func messageGone(err error) bool {
	d := errDescription(err)
	return strings.Contains(d, "message to edit not found") || strings.Contains(d, "MESSAGE_ID_INVALID") ||
		strings.Contains(d, "message can't be edited")
}

// send calls a method that returns a Message, bound to ctx.
func (b *Bot) send(ctx context.Context, method string, c tgbotapi.Chattable) (tgbotapi.Message, error) {
	m, err := b.apiFor(ctx).Send(c)
	return m, b.classify(method, err)
}

// request calls a method whose result the caller does not need.
func (b *Bot) request(ctx context.Context, method string, c tgbotapi.Chattable) error {
	_, err := b.apiFor(ctx).Request(c)
	return b.classify(method, err)
}

// rawRequest calls a method with explicit parameters (for ones the library
// lacks, such as setWebhook's secret_token).
func (b *Bot) rawRequest(ctx context.Context, method string, p tgbotapi.Params) (json.RawMessage, error) {
	resp, err := b.apiFor(ctx).MakeRequest(method, p)
	if err != nil {
		return nil, b.classify(method, err)
	}
	return resp.Result, nil
}

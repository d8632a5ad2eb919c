// Package config reads approvalbot's settings from the environment and
// loads the rules file.
package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// Prefix is the environment prefix of every setting.
const Prefix = "APPROVALBOT"

// Settings are approvalbot's settings, from APPROVALBOT_* variables.
// The `desc` tags are printed by `approvalbot doctor` and kept in step with
// README.md by a test.
type Settings struct {
	DataDir     string            `envconfig:"DATA_DIR" desc:"directory of the bbolt file (default ~/.local/share/approvalbot)"`
	Listen      string            `envconfig:"LISTEN" default:"127.0.0.1:8754" desc:"address the daemon's HTTP API listens on"`
	URL         string            `envconfig:"URL" default:"http://127.0.0.1:8754" desc:"where clients (hooks, CLI, watch) reach the daemon"`
	Token       string            `envconfig:"TOKEN" desc:"bearer token clients send"`
	APITokens   map[string]string `envconfig:"API_TOKENS" desc:"agent tokens, agent:token,... (an agent token may only submit calls and read its own)"`
	AdminTokens map[string]string `envconfig:"ADMIN_TOKENS" desc:"approver tokens, name:token,... (may decide, manage rules and modes); none: DATA_DIR/approver.token"`
	Rules       string            `envconfig:"RULES" desc:"rules file (JSONC); embedded defaults when empty"`
	Protect     []string          `envconfig:"PROTECT" desc:"extra paths no agent may write, comma-separated"`
	Timeout     time.Duration     `envconfig:"TIMEOUT" default:"10m" desc:"how long an approval waits for a person"`
	DenyMemory  time.Duration     `envconfig:"DENY_MEMORY" default:"5m" desc:"how long a denial of the exact same call is repeated without asking"`
	LogLevel    string            `envconfig:"LOG_LEVEL" default:"info" desc:"debug, info, warn or error"`
	LogFormat   string            `envconfig:"LOG_FORMAT" default:"text" desc:"text or json"`
	// InitEmptyStore lets serve turn a zero-byte approvalbot.db into a new
	// store; by default such a file (a crash while it was first written, a
	// truncation, a failed restore) is refused rather than silently emptied.
	InitEmptyStore bool `envconfig:"INIT_EMPTY_STORE" desc:"true: a zero-byte approvalbot.db is made a new, empty store (default: refused)"`
	// PublicURL is where people reach the daemon (the web page's sign-in
	// links and QR codes use it): a Tailscale name, a reverse proxy.
	PublicURL string `envconfig:"PUBLIC_URL" desc:"address people reach the daemon at, for the web page's sign-in links and QR codes (e.g. https://box.tailnet.ts.net:8754)"`
	TLSCert   string `envconfig:"TLS_CERT" desc:"TLS certificate file (PEM): serve https on LISTEN (with TLS_KEY)"`
	TLSKey    string `envconfig:"TLS_KEY" desc:"TLS private key file (PEM), with TLS_CERT"`

	// Limits that keep one agent token or client from taking the daemon
	// (or its disk) for itself.
	MaxPending  int           `envconfig:"MAX_PENDING" default:"1000" desc:"pending approvals one agent may have; more get 429"`
	MaxStoredMB int64         `envconfig:"MAX_STORED_MB" default:"256" desc:"MiB of tool input one agent may have stored (pending and decided, until pruned); more get 429"`
	Retention   time.Duration `envconfig:"RETENTION" default:"2160h" desc:"decided approvals older than this are pruned (default 90 days; the audit log is kept)"`
	MaxConns    int           `envconfig:"MAX_CONNS" default:"512" desc:"open connections to LISTEN; more get 503 and are closed"`
	IdleTimeout time.Duration `envconfig:"IDLE_TIMEOUT" default:"60s" desc:"keep-alive connections idle this long are closed"`
	BodyTimeout time.Duration `envconfig:"BODY_TIMEOUT" default:"30s" desc:"time a client has to send a request body"`

	TelegramToken         string  `envconfig:"TELEGRAM_TOKEN" desc:"Telegram bot token from @BotFather"`
	TelegramChatID        int64   `envconfig:"TELEGRAM_CHAT_ID" desc:"chat to send prompts to (0: the chat paired with /pair)"`
	TelegramApprovers     []int64 `envconfig:"TELEGRAM_APPROVERS" desc:"Telegram user ids allowed to decide, comma-separated"`
	TelegramAPIURL        string  `envconfig:"TELEGRAM_API_URL" default:"https://api.telegram.org" desc:"Bot API base URL"`
	TelegramWebhookURL    string  `envconfig:"TELEGRAM_WEBHOOK_URL" desc:"public https URL routed to /telegram/webhook on LISTEN; empty: long polling"`
	TelegramWebhookSecret string  `envconfig:"TELEGRAM_WEBHOOK_SECRET" desc:"secret_token Telegram sends with each webhook request (required with the webhook)"`

	SlackBotToken      string   `envconfig:"SLACK_BOT_TOKEN" desc:"Slack bot token (xoxb-...)"`
	SlackAppToken      string   `envconfig:"SLACK_APP_TOKEN" desc:"Slack app-level token for Socket Mode (xapp-...)"`
	SlackChannel       string   `envconfig:"SLACK_CHANNEL" desc:"Slack channel id to post prompts in"`
	SlackApprovers     []string `envconfig:"SLACK_APPROVERS" desc:"Slack user ids allowed to decide, comma-separated"`
	SlackSigningSecret string   `envconfig:"SLACK_SIGNING_SECRET" desc:"signing secret for HTTP interactivity (instead of Socket Mode)"`
	SlackAPIURL        string   `envconfig:"SLACK_API_URL" default:"https://slack.com/api/" desc:"Slack Web API base URL"`
}

// Load reads the settings from the process environment. A variable set to
// the empty string counts as unset (so an .env file with blank lines such as
// `APPROVALBOT_TELEGRAM_CHAT_ID=` keeps the default instead of failing to
// parse); Load unsets such variables before envconfig reads them.
func Load() (Settings, error) {
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); v == "" && strings.HasPrefix(k, Prefix+"_") {
			os.Unsetenv(k)
		}
	}
	// Token lists are checked first: envconfig's own parse errors quote
	// the whole value, tokens and all.
	for _, name := range []string{"API_TOKENS", "ADMIN_TOKENS"} {
		if err := checkTokenList(Prefix+"_"+name, os.Getenv(Prefix+"_"+name)); err != nil {
			return Settings{}, err
		}
	}
	var s Settings
	if err := envconfig.Process(Prefix, &s); err != nil {
		return s, fmt.Errorf("read %s_* settings: %w", Prefix, err)
	}
	if err := s.fill(); err != nil {
		return s, err
	}
	return s, s.Validate()
}

// fill resolves defaults that depend on the machine.
func (s *Settings) fill() error {
	if s.DataDir == "" {
		dir, err := DataDir(os.Getenv)
		if err != nil {
			return err
		}
		s.DataDir = dir
	}
	if abs, err := filepath.Abs(s.DataDir); err == nil {
		s.DataDir = abs
	}
	if s.TelegramAPIURL == "" {
		s.TelegramAPIURL = "https://api.telegram.org"
	}
	if s.SlackAPIURL == "" {
		s.SlackAPIURL = "https://slack.com/api/"
	}
	if s.Rules != "" {
		if abs, err := filepath.Abs(s.Rules); err == nil {
			s.Rules = abs
		}
	}
	return nil
}

// DataDir finds the data dir the way `serve` does: APPROVALBOT_DATA_DIR,
// else ~/.local/share/approvalbot, made absolute. Client commands use it to
// find the approver token on the daemon's machine.
func DataDir(getenv func(string) string) (string, error) {
	dir := getenv(Prefix + "_DATA_DIR")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", fmt.Errorf("find home for the default data dir (set %s_DATA_DIR): %w", Prefix, err)
			}
		}
		dir = filepath.Join(home, ".local", "share", "approvalbot")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir, nil
}

// Validate checks settings that would otherwise fail late or unsafely.
func (s Settings) Validate() error {
	if s.Timeout <= 0 {
		return fmt.Errorf("%s_TIMEOUT must be positive, got %s", Prefix, s.Timeout)
	}
	// Zero is the default (a Settings built in code); a negative limit is
	// a mistake, not "no limit".
	if s.MaxPending < 0 || s.MaxStoredMB < 0 || s.MaxConns < 0 || s.IdleTimeout < 0 || s.BodyTimeout < 0 {
		return fmt.Errorf("%s_MAX_PENDING, _MAX_STORED_MB, _MAX_CONNS, _IDLE_TIMEOUT and _BODY_TIMEOUT must be positive", Prefix)
	}
	if s.Retention < 0 || (s.Retention > 0 && s.Retention < s.Timeout) {
		return fmt.Errorf("%s_RETENTION %s must be at least %s_TIMEOUT (%s)", Prefix, s.Retention, Prefix, s.Timeout)
	}
	if _, _, err := net.SplitHostPort(s.Listen); err != nil {
		return fmt.Errorf("%s_LISTEN %q: %w", Prefix, s.Listen, err)
	}
	switch strings.ToLower(s.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("%s_LOG_LEVEL %q: want debug, info, warn or error", Prefix, s.LogLevel)
	}
	for name, tok := range s.APITokens {
		if why := weakToken(tok); why != "" {
			return fmt.Errorf("%s_API_TOKENS: the token of %q %s", Prefix, name, why)
		}
	}
	for name, tok := range s.AdminTokens {
		if why := weakToken(tok); why != "" {
			return fmt.Errorf("%s_ADMIN_TOKENS: the token of %q %s", Prefix, name, why)
		}
	}
	if !s.LoopbackListen() && len(s.APITokens) == 0 && len(s.AdminTokens) == 0 {
		return fmt.Errorf("%s_LISTEN %s is not loopback: set %s_API_TOKENS and %s_ADMIN_TOKENS so the API is not open to the network",
			Prefix, s.Listen, Prefix, Prefix)
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return fmt.Errorf("%s_TLS_CERT and %s_TLS_KEY go together: set both or neither", Prefix, Prefix)
	}
	if s.PublicURL != "" {
		u, err := url.Parse(s.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("%s_PUBLIC_URL %q: want http(s)://host[:port], without a path", Prefix, s.PublicURL)
		}
	}
	if s.TelegramToken != "" && len(s.TelegramApprovers) == 0 {
		return fmt.Errorf("%s_TELEGRAM_APPROVERS is empty: nobody could decide in Telegram; set the user ids of the approvers", Prefix)
	}
	if s.TelegramWebhookURL != "" && s.TelegramWebhookSecret == "" {
		return fmt.Errorf("%s_TELEGRAM_WEBHOOK_SECRET is required with %s_TELEGRAM_WEBHOOK_URL", Prefix, Prefix)
	}
	if s.SlackBotToken != "" {
		if s.SlackChannel == "" {
			return fmt.Errorf("%s_SLACK_CHANNEL is required with %s_SLACK_BOT_TOKEN", Prefix, Prefix)
		}
		if len(s.SlackApprovers) == 0 {
			return fmt.Errorf("%s_SLACK_APPROVERS is empty: nobody could decide in Slack; set the user ids of the approvers", Prefix)
		}
		if s.SlackAppToken == "" && s.SlackSigningSecret == "" {
			return fmt.Errorf("Slack needs %s_SLACK_APP_TOKEN (Socket Mode) or %s_SLACK_SIGNING_SECRET (HTTP interactivity at /slack/interactivity on LISTEN)", Prefix, Prefix)
		}
	}
	return nil
}

// LoopbackListen reports whether the API listens on a loopback address only.
func (s Settings) LoopbackListen() bool {
	host, _, err := net.SplitHostPort(s.Listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// DBPath is the bbolt file inside the data dir.
func (s Settings) DBPath() string { return filepath.Join(s.DataDir, "approvalbot.db") }

// weakToken says why tok must not be used: too short, or the placeholder
// of .env.example.
func weakToken(tok string) string {
	switch {
	case len(tok) < 16:
		return "is shorter than 16 characters"
	case strings.HasPrefix(strings.ToLower(tok), "change-me"):
		return "is the placeholder from .env.example: generate one (openssl rand -hex 32)"
	}
	return ""
}

// checkTokenList checks a name:token,... list before it is parsed, and
// says where it is wrong without showing any part of it.
func checkTokenList(name, v string) error {
	if v == "" {
		return nil
	}
	for i, item := range strings.Split(v, ",") {
		k, tok, ok := strings.Cut(item, ":")
		if !ok || strings.TrimSpace(k) == "" || tok == "" {
			return fmt.Errorf("%s: item %d of the list is not name:token (the value is not shown)", name, i+1)
		}
	}
	return nil
}

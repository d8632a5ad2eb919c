package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"approvalbot/config"
)

// doctorTimeout bounds each remote check, so doctor never hangs on a
// network that drops packets.
const doctorTimeout = 10 * time.Second

// check is one doctor finding.
type check struct {
	name string
	ok   bool
	msg  string // what was found
	fix  string // what to do, when not ok
}

func runDoctor(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	health := fs.Bool("health", false, "only check that the daemon at APPROVALBOT_URL is healthy (for container health checks)")
	fs.Usage = func() {
		fmt.Fprintln(e.stdout, "usage: approvalbot doctor [--health]\n\nChecks the settings, the rules file, the data dir, the daemon and the chat frontends, each with a fix.")
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil || fs.NArg() > 0 {
		fmt.Fprintln(e.stderr, "usage: approvalbot doctor [--health]")
		return exitUsage
	}
	if *health {
		return healthOnly(ctx, e)
	}
	checks := doctor(ctx, e)
	failed := 0
	for _, c := range checks {
		mark := "ok  "
		if !c.ok {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(e.stdout, "[%s] %s: %s\n", mark, c.name, c.msg)
		if !c.ok && c.fix != "" {
			fmt.Fprintf(e.stdout, "       fix: %s\n", c.fix)
		}
	}
	if failed > 0 {
		fmt.Fprintf(e.stdout, "%d problem(s) found\n", failed)
		return exitFailure
	}
	fmt.Fprintln(e.stdout, "all checks passed")
	return exitOK
}

func healthOnly(ctx context.Context, e *env) int {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	h, err := clientFromEnv(e).Health(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "unhealthy: %v\n", err)
		return exitFailure
	}
	if !h.OK {
		fmt.Fprintf(e.stderr, "unhealthy: %s\n", h.RulesError)
		return exitFailure
	}
	fmt.Fprintf(e.stdout, "healthy, %d pending\n", h.Pending)
	return exitOK
}

// doctor runs every check and returns the findings in order.
func doctor(ctx context.Context, e *env) []check {
	var out []check
	s, err := config.Load()
	if err != nil {
		return append(out, check{name: "settings", msg: err.Error(),
			fix: "correct the APPROVALBOT_* variable named above (see README.md, Settings)"})
	}
	out = append(out, check{name: "settings", ok: true, msg: "APPROVALBOT_* variables parse and are consistent"})

	home, _ := os.UserHomeDir()
	if _, err := loadPolicy(s, home); err != nil {
		out = append(out, check{name: "rules", msg: err.Error(),
			fix: "fix the rules file at the line named above, or unset APPROVALBOT_RULES to use the defaults"})
	} else {
		out = append(out, check{name: "rules", ok: true, msg: rulesName(s) + " compiles"})
		for _, w := range rulesWarnings(s, home) {
			// Warnings do not fail the check: the rules do what they say.
			out = append(out, check{name: "rules lint", ok: true, msg: "warning: " + w.String()})
		}
	}
	out = append(out, checkDataDir(s.DataDir))

	hc := &http.Client{Timeout: doctorTimeout}
	if s.TelegramToken != "" {
		out = append(out, checkTelegram(ctx, hc, s)...)
	}
	if s.SlackBotToken != "" {
		out = append(out, checkSlack(ctx, hc, s)...)
	}
	if s.TelegramToken == "" && s.SlackBotToken == "" {
		out = append(out, check{name: "frontends", ok: true,
			msg: "none configured: decide with `approvalbot watch`, `approvalbot approve/deny` or the API"})
	}

	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c := clientFromEnv(e)
	h, err := c.Health(hctx)
	switch {
	case err != nil:
		out = append(out, check{name: "daemon", msg: fmt.Sprintf("%s: %v", c.BaseURL(), err),
			fix: "start it with `approvalbot serve`, or set APPROVALBOT_URL (and APPROVALBOT_TOKEN) to where it runs"})
	case !h.OK && h.StoreError != "":
		out = append(out, check{name: "daemon", msg: "unhealthy: " + h.StoreError, fix: "free disk space or make the data dir writable again; the daemon recovers by itself"})
	case !h.OK:
		out = append(out, check{name: "daemon", msg: "unhealthy: " + h.RulesError, fix: "fix the rules file; the daemon reloads it"})
	default:
		out = append(out, check{name: "daemon", ok: true, msg: fmt.Sprintf("%s is healthy, %d pending", c.BaseURL(), h.Pending)})
	}
	return out
}

func checkDataDir(dir string) check {
	c := check{name: "data dir"}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		c.ok, c.msg = true, dir+" does not exist yet; serve creates it"
		return c
	case err != nil:
		c.msg, c.fix = err.Error(), "make "+dir+" accessible to this user or set APPROVALBOT_DATA_DIR"
		return c
	case !fi.IsDir():
		c.msg, c.fix = dir+" is not a directory", "set APPROVALBOT_DATA_DIR to a directory"
		return c
	}
	probe, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		c.msg, c.fix = dir+" is not writable: "+err.Error(), "chown/chmod it for this user, or set APPROVALBOT_DATA_DIR"
		return c
	}
	probe.Close()
	os.Remove(probe.Name())
	if fi.Mode().Perm()&0o077 != 0 {
		c.msg, c.fix = fmt.Sprintf("%s is readable by others (%v)", dir, fi.Mode().Perm()), "chmod 700 "+dir
		return c
	}
	c.ok, c.msg = true, dir+" is writable"
	if _, err := os.Stat(filepath.Join(dir, "approvalbot.db")); err == nil {
		c.msg += " and holds approvalbot.db"
	}
	return c
}

// getJSON calls a URL and decodes the JSON answer, whatever the status,
// into out. Errors never contain the URL (it holds the Telegram token).
func getJSON(ctx context.Context, hc *http.Client, method, u string, header http.Header, out any) error {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return errors.New("bad API URL")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // drop the URL
		}
		return fmt.Errorf("request failed: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("HTTP %d, not a JSON answer", resp.StatusCode)
	}
	return nil
}

func checkTelegram(ctx context.Context, hc *http.Client, s config.Settings) []check {
	base := strings.TrimRight(s.TelegramAPIURL, "/") + "/bot" + s.TelegramToken + "/"
	var me struct {
		OK          bool   `json:"ok"`
		Description string `json:"description"`
		Result      struct {
			Username string `json:"username"`
		} `json:"result"`
	}
	if err := getJSON(ctx, hc, http.MethodGet, base+"getMe", nil, &me); err != nil {
		return []check{{name: "telegram", msg: "getMe: " + err.Error(),
			fix: "check network access to " + s.TelegramAPIURL + " (APPROVALBOT_TELEGRAM_API_URL)"}}
	}
	if !me.OK {
		return []check{{name: "telegram", msg: "getMe refused the token: " + me.Description,
			fix: "set APPROVALBOT_TELEGRAM_TOKEN to the token @BotFather gave you"}}
	}
	out := []check{{name: "telegram", ok: true, msg: "token belongs to @" + me.Result.Username}}
	if s.TelegramChatID == 0 {
		return append(out, check{name: "telegram chat", ok: true,
			msg: "no APPROVALBOT_TELEGRAM_CHAT_ID: pair a chat with /pair CODE (serve prints the code)"})
	}
	var chat struct {
		OK          bool   `json:"ok"`
		Description string `json:"description"`
	}
	u := base + "getChat?chat_id=" + strconv.FormatInt(s.TelegramChatID, 10)
	if err := getJSON(ctx, hc, http.MethodGet, u, nil, &chat); err != nil || !chat.OK {
		msg := chat.Description
		if err != nil {
			msg = err.Error()
		}
		return append(out, check{name: "telegram chat", msg: fmt.Sprintf("chat %d not reachable: %s", s.TelegramChatID, msg),
			fix: "send /start to the bot from that chat (or add the bot to the group), and check APPROVALBOT_TELEGRAM_CHAT_ID"})
	}
	return append(out, check{name: "telegram chat", ok: true, msg: fmt.Sprintf("chat %d is reachable", s.TelegramChatID)})
}

func checkSlack(ctx context.Context, hc *http.Client, s config.Settings) []check {
	base := strings.TrimRight(s.SlackAPIURL, "/") + "/"
	hdr := http.Header{"Authorization": {"Bearer " + s.SlackBotToken}}
	var auth struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		Team  string `json:"team"`
		User  string `json:"user"`
	}
	if err := getJSON(ctx, hc, http.MethodPost, base+"auth.test", hdr, &auth); err != nil {
		return []check{{name: "slack", msg: "auth.test: " + err.Error(),
			fix: "check network access to " + s.SlackAPIURL + " (APPROVALBOT_SLACK_API_URL)"}}
	}
	if !auth.OK {
		return []check{{name: "slack", msg: "auth.test refused the bot token: " + auth.Error,
			fix: "set APPROVALBOT_SLACK_BOT_TOKEN to the app's Bot User OAuth Token (xoxb-...)"}}
	}
	out := []check{{name: "slack", ok: true, msg: fmt.Sprintf("bot @%s in workspace %s", auth.User, auth.Team)}}
	var info struct {
		OK      bool   `json:"ok"`
		Error   string `json:"error"`
		Channel struct {
			IsMember bool `json:"is_member"`
		} `json:"channel"`
	}
	u := base + "conversations.info?channel=" + url.QueryEscape(s.SlackChannel)
	if err := getJSON(ctx, hc, http.MethodGet, u, hdr, &info); err != nil || !info.OK {
		msg := info.Error
		if err != nil {
			msg = err.Error()
		}
		return append(out, check{name: "slack channel", msg: fmt.Sprintf("channel %s: %s", s.SlackChannel, msg),
			fix: "set APPROVALBOT_SLACK_CHANNEL to the channel id (not its name) and give the app channels:read"})
	}
	if !info.Channel.IsMember {
		return append(out, check{name: "slack channel", msg: "the bot is not a member of " + s.SlackChannel,
			fix: "invite it: /invite @approvalbot in that channel"})
	}
	return append(out, check{name: "slack channel", ok: true, msg: "the bot is a member of " + s.SlackChannel})
}

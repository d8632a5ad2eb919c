package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"approvalbot/bots/slacktest"
	"approvalbot/bots/telegramtest"
)

// runDoctorWith runs `approvalbot doctor args...` in-process with the given
// settings (as environment variables), an empty HOME and project, and
// returns its exit code and output.
func runDoctorWith(t *testing.T, settings map[string]string, args ...string) (int, string) {
	t.Helper()
	// A clean APPROVALBOT_* environment: only what the case sets.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "APPROVALBOT_") {
			t.Setenv(k, "")
		}
	}
	// No agent settings but the case's.
	t.Setenv("HOME", t.TempDir())
	for _, k := range []string{"CODEX_HOME", "COPILOT_HOME", "XDG_CONFIG_HOME", "GEMINI_CLI_TRUSTED_FOLDERS_PATH"} {
		t.Setenv(k, "")
	}
	t.Setenv("APPROVALBOT_DATA_DIR", filepath.Join(t.TempDir(), "data"))
	t.Setenv("APPROVALBOT_URL", "http://"+freeAddr(t)) // no daemon there
	for k, v := range settings {
		t.Setenv(k, v)
	}
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: os.Getenv}
	code := dispatch(context.Background(), e, append([]string{"doctor", "--project", t.TempDir()}, args...))
	return code, out.String() + errOut.String()
}

func TestDoctor(t *testing.T) {
	tg := telegramtest.New(t, "123:good")
	sl := slacktest.New(t)
	slBad := slacktest.New(t)
	slBad.Fail("auth.test", "invalid_auth")
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // nothing listens there any more
	badRules := filepath.Join(t.TempDir(), "rules.jsonc")
	os.WriteFile(badRules, []byte(`{"Bash": {"git [": "allow"}}`), 0o600)

	tests := []struct {
		name     string
		settings map[string]string
		want     []string // lines that must appear
	}{
		{"defaults", nil, []string{
			"[ok  ] settings", "[ok  ] rules: (default rules) compiles", "[ok  ] data dir",
			"[ok  ] frontends: none configured", "[FAIL] daemon", "fix: start it with `approvalbot serve`",
			"[ok  ] claude hook: not set up: `approvalbot install claude` gates Claude Code (looked in ~/.claude/settings.json, ",
			"[ok  ] opencode hook: not set up",
		}},
		{"bad setting", map[string]string{"APPROVALBOT_TIMEOUT": "-5m"}, []string{
			"[FAIL] settings: APPROVALBOT_TIMEOUT must be positive",
		}},
		{"broken rules", map[string]string{"APPROVALBOT_RULES": badRules}, []string{
			"[FAIL] rules:", "rules.jsonc", "fix: fix the rules file",
		}},
		{"telegram good token", map[string]string{
			"APPROVALBOT_TELEGRAM_TOKEN": "123:good", "APPROVALBOT_TELEGRAM_APPROVERS": "42",
			"APPROVALBOT_TELEGRAM_API_URL": tg.APIURL(),
		}, []string{"[ok  ] telegram: token belongs to @approval_test_bot", "[ok  ] telegram: no APPROVALBOT_TELEGRAM_CHAT_ID"}},
		{"telegram bad token", map[string]string{
			"APPROVALBOT_TELEGRAM_TOKEN": "123:wrong", "APPROVALBOT_TELEGRAM_APPROVERS": "42",
			"APPROVALBOT_TELEGRAM_API_URL": tg.APIURL(),
		}, []string{"[FAIL] telegram: getMe refused the token: 401 Unauthorized", "fix: set APPROVALBOT_TELEGRAM_TOKEN"}},
		{"telegram chat the fake cannot find", map[string]string{
			"APPROVALBOT_TELEGRAM_TOKEN": "123:good", "APPROVALBOT_TELEGRAM_APPROVERS": "42", "APPROVALBOT_TELEGRAM_CHAT_ID": "42",
			"APPROVALBOT_TELEGRAM_API_URL": tg.APIURL(),
		}, []string{"[ok  ] telegram: token belongs to @", "[FAIL] telegram: chat 42 is not reachable: 404", "fix: send /start to the bot"}},
		{"telegram unreachable", map[string]string{
			"APPROVALBOT_TELEGRAM_TOKEN": "123:good", "APPROVALBOT_TELEGRAM_APPROVERS": "42",
			"APPROVALBOT_TELEGRAM_API_URL": gone.URL,
		}, []string{"[FAIL] telegram: getMe: request failed:", "fix: check network access to " + gone.URL + " (APPROVALBOT_TELEGRAM_API_URL)"}},
		{"slack good token", map[string]string{
			"APPROVALBOT_SLACK_BOT_TOKEN": "xoxb-good", "APPROVALBOT_SLACK_APP_TOKEN": "xapp-1",
			"APPROVALBOT_SLACK_CHANNEL": "C123", "APPROVALBOT_SLACK_APPROVERS": "U1",
			"APPROVALBOT_SLACK_API_URL": sl.APIURL(),
		}, []string{"[ok  ] slack: bot @approvalbot in workspace Fake Team", "[ok  ] slack: the bot is a member of C123"}},
		{"slack not in channel", map[string]string{
			"APPROVALBOT_SLACK_BOT_TOKEN": "xoxb-good", "APPROVALBOT_SLACK_APP_TOKEN": "xapp-1",
			"APPROVALBOT_SLACK_CHANNEL": "G999", "APPROVALBOT_SLACK_APPROVERS": "U1",
			"APPROVALBOT_SLACK_API_URL": sl.APIURL(),
		}, []string{"[FAIL] slack: the bot is not a member of G999", "fix: invite it: /invite @approvalbot"}},
		{"slack bad token", map[string]string{
			"APPROVALBOT_SLACK_BOT_TOKEN": "xoxb-bad", "APPROVALBOT_SLACK_APP_TOKEN": "xapp-1",
			"APPROVALBOT_SLACK_CHANNEL": "C123", "APPROVALBOT_SLACK_APPROVERS": "U1",
			"APPROVALBOT_SLACK_API_URL": slBad.APIURL(),
		}, []string{"[FAIL] slack: auth.test refused the bot token: invalid_auth"}},
		{"slack unreachable", map[string]string{
			"APPROVALBOT_SLACK_BOT_TOKEN": "xoxb-good", "APPROVALBOT_SLACK_APP_TOKEN": "xapp-1",
			"APPROVALBOT_SLACK_CHANNEL": "C123", "APPROVALBOT_SLACK_APPROVERS": "U1",
			"APPROVALBOT_SLACK_API_URL": gone.URL + "/",
		}, []string{"[FAIL] slack: auth.test: request failed:", "fix: check network access to " + gone.URL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runDoctorWith(t, tt.settings)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			// The daemon is never running here, so doctor always reports a problem.
			if code != exitFailure {
				t.Errorf("exit = %d, want %d", code, exitFailure)
			}
			for _, secret := range []string{"123:good", "123:wrong", "xoxb-good", "xoxb-bad", "xapp-1"} {
				if strings.Contains(out, secret) {
					t.Errorf("output shows the token %q", secret)
				}
			}
		})
	}
}

// TestDoctorHealthy: with a running daemon every check passes, exit 0, and
// --health answers for the container health check.
func TestDoctorHealthy(t *testing.T) {
	addr := freeAddr(t)
	data := filepath.Join(t.TempDir(), "data") // serve creates it 0700
	startDaemon(t, addr, "APPROVALBOT_DATA_DIR="+data)
	code, out := runDoctorWith(t, map[string]string{"APPROVALBOT_URL": "http://" + addr, "APPROVALBOT_DATA_DIR": data})
	if code != exitOK || !strings.Contains(out, "all checks passed") || !strings.Contains(out, "[ok  ] daemon") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var o bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &o, stderr: &o, getenv: os.Getenv}
	if c := dispatch(context.Background(), e, []string{"doctor", "--health"}); c != exitOK || !strings.Contains(o.String(), "healthy") {
		t.Errorf("--health = %d %q", c, o.String())
	}
}

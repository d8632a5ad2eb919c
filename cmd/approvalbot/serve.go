package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"approvalbot/api"
	"approvalbot/config"
	"approvalbot/gate"
	"approvalbot/store"
)

// rulesPollInterval is how often serve checks the rules file for changes;
// polling needs no extra dependency and a rules edit is rare.
const rulesPollInterval = 2 * time.Second

// shutdownGrace bounds a graceful stop: open long-polls are ended at once
// (their approvals stay pending), other requests get this long.
const shutdownGrace = 5 * time.Second

func runServe(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(e.stdout, "usage: approvalbot serve\n\nRuns the daemon. Its settings come from the environment (README.md, Settings):")
		printSettings(e.stdout)
		return exitOK
	}
	if len(args) > 0 {
		fmt.Fprintf(e.stderr, "approvalbot serve: unexpected arguments %q (settings come from APPROVALBOT_* variables)\n", args)
		return exitUsage
	}
	s, err := config.Load()
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot serve: %v\n", err)
		return exitUsage
	}
	logger := newLogger(e, s)
	if err := serve(ctx, e, s, logger); err != nil {
		logger.Error("serve failed", "err", err)
		var ue usageError
		if errors.As(err, &ue) {
			return exitUsage
		}
		return exitFailure
	}
	return exitOK
}

// usageError marks a failure caused by the settings or the rules file.
type usageError struct{ error }

func newLogger(e *env, s config.Settings) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(s.LogLevel)) // validated by config
	opts := &slog.HandlerOptions{Level: lvl}
	if strings.EqualFold(s.LogFormat, "json") {
		return slog.New(slog.NewJSONHandler(e.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(e.stderr, opts))
}

// protectedPaths are the paths no agent may write: the rules file, the data
// dir, approvalbot's settings, and the agents' own hook settings (an agent
// that edits them could remove the gate).
func protectedPaths(s config.Settings, home string) []string {
	ps := []string{s.DataDir}
	if s.Rules != "" {
		ps = append(ps, s.Rules)
	}
	if home != "" {
		ps = append(ps,
			filepath.Join(home, ".config", "approvalbot"),
			filepath.Join(home, ".claude", "settings.json"),
			filepath.Join(home, ".claude", "settings.local.json"),
			filepath.Join(home, ".codex"),
		)
	}
	for _, p := range s.Protect {
		if p = strings.TrimSpace(p); p != "" {
			if abs, err := filepath.Abs(p); err == nil {
				ps = append(ps, abs)
			}
		}
	}
	return ps
}

// loadPolicy is config.LoadPolicy with this installation's protected paths.
func loadPolicy(s config.Settings, home string) (*gate.Policy, error) {
	return config.LoadPolicy(s, home, protectedPaths(s, home))
}

// printSettings lists every APPROVALBOT_* setting with its default and
// description, from the same struct tags the README table is checked
// against.
func printSettings(w io.Writer) {
	st := reflect.TypeOf(config.Settings{})
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for i := range st.NumField() {
		f := st.Field(i)
		name := f.Tag.Get("envconfig")
		if name == "" {
			continue
		}
		def := f.Tag.Get("default")
		if def == "" {
			def = "-"
		}
		fmt.Fprintf(tw, "  %s_%s\t%s\t%s\n", config.Prefix, name, def, f.Tag.Get("desc"))
	}
	tw.Flush()
}

// rulesWarnings lints the rules file in settings (or the defaults); nil
// when it does not load (loadPolicy reports that).
func rulesWarnings(s config.Settings, home string) []gate.LintWarning {
	var spec gate.PolicySpec
	var err error
	if s.Rules != "" {
		spec, err = config.LoadRules(s.Rules, home)
	} else {
		spec, err = config.ParseRules("(default rules)", config.DefaultRules(), home)
	}
	if err != nil {
		return nil
	}
	return gate.Lint(spec)
}

func invert(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for name, tok := range m {
		out[tok] = name
	}
	return out
}

func serve(ctx context.Context, e *env, s config.Settings, logger *slog.Logger) error {
	home, _ := os.UserHomeDir()
	// Stamped before the load: an edit from here on is seen by config.WatchRules.
	rulesStamp := config.RulesStamp(s.Rules)
	policy, err := loadPolicy(s, home)
	if err != nil {
		return usageError{fmt.Errorf("load rules: %w", err)}
	}
	for _, w := range rulesWarnings(s, home) {
		logger.Warn("rules file: "+w.Message, "at", fmt.Sprintf("%s:%d", w.File, w.Line), "rule", w.Tool+": "+w.Pattern, "fix", w.Fix)
	}
	if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir %s: %w", s.DataDir, err)
	}
	st, err := store.Open(s.DBPath(), store.Options{InitEmpty: s.InitEmptyStore})
	if err != nil {
		return err
	}
	defer st.Close()
	// The audit key lives beside the database, not in it; made at the first
	// start, it keys every entry written from then on.
	next, err := st.AuditNext(ctx)
	if err != nil {
		return err
	}
	akey, err := store.EnsureAuditKey(filepath.Join(s.DataDir, store.AuditKeyFile), next)
	if err != nil {
		return fmt.Errorf("audit key: %w", err)
	}
	st.UseAuditKey(akey)

	g := gate.New(gate.Config{Timeout: s.Timeout, DenyMemory: s.DenyMemory, MaxPending: s.MaxPending,
		MaxStoredBytes: s.MaxStoredMB << 20, Retention: s.Retention}, policy, st, logger)
	defer g.Close()

	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.Listen, err)
	}
	ln = api.LimitListener(ln, cmp.Or(s.MaxConns, api.DefaultMaxConns), s.TLSCert == "")
	admins, err := approverTokens(s, logger)
	if err != nil {
		return usageError{err}
	}
	metrics := api.NewMetrics()
	open := s.LoopbackListen() && len(s.APITokens) == 0 && len(s.AdminTokens) == 0
	srv := api.NewServer(api.Config{
		AgentTokens: invert(s.APITokens),
		AdminTokens: admins,
		Open:        open,
		Metrics:     metrics,
	}, g, logger)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	fe, err := startFrontends(runCtx, e, s, g, metrics, logger)
	if err != nil {
		return usageError{err}
	}
	defer func() {
		cancel() // the loops end on runCtx; then their outboxes close
		fe.wait()
	}()
	fe.handlers["/ui/"] = webUI(e, s, g, admins, ln.Addr(), logger) // the approval page (package web)
	if err := g.Start(runCtx); err != nil {
		return fmt.Errorf("start gate: %w", err)
	}
	go metrics.Consume(runCtx, g)
	go config.WatchRules(runCtx, s.Rules, func() (*gate.Policy, error) { return loadPolicy(s, home) }, g, rulesStamp, rulesPollInterval, logger)

	// Handlers see runCtx, so shutdown ends open long-polls at once instead
	// of waiting for their approvals.
	// No ReadTimeout: it would cut long-polls; BodyDeadline bounds the
	// body alone.
	hs := &http.Server{
		Handler:           api.BodyDeadline(fe.mux(srv), cmp.Or(s.BodyTimeout, api.DefaultBodyTimeout)),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       cmp.Or(s.IdleTimeout, api.DefaultIdleTimeout),
		BaseContext:       func(net.Listener) context.Context { return runCtx },
	}
	serveErr := make(chan error, 1)
	go func() {
		if s.TLSCert != "" {
			serveErr <- hs.ServeTLS(ln, s.TLSCert, s.TLSKey)
			return
		}
		serveErr <- hs.Serve(ln)
	}()
	logger.Info("approvalbot serving", "listen", ln.Addr().String(), "data_dir", s.DataDir,
		"rules", rulesName(s), "open_loopback", open, "frontends", fe.names)
	if len(fe.names) == 0 {
		logger.Info("no chat frontend configured: decide with `approvalbot watch`, `approvalbot approve/deny` or the API")
	}

	select {
	case <-ctx.Done():
		logger.Info("shutting down")
	case err := <-serveErr:
		cancel()
		return fmt.Errorf("http server: %w", err)
	}
	cancel()
	shCtx, shCancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer shCancel()
	if err := hs.Shutdown(shCtx); err != nil {
		logger.Warn("http shutdown", "err", err)
	}
	return nil
}

// approverTokens returns the admin tokens (token -> approver name): those of
// APPROVALBOT_ADMIN_TOKENS, else the one in DATA_DIR/approver.token, made
// at the first start. Deciding always needs one of them, also on an open
// loopback listener, so no process that cannot read that file (or was not
// given a token) decides for the person.
func approverTokens(s config.Settings, logger *slog.Logger) (map[string]string, error) {
	if len(s.AdminTokens) > 0 {
		return invert(s.AdminTokens), nil
	}
	tok, created, err := config.EnsureApproverToken(s.DataDir)
	if err != nil {
		return nil, err
	}
	path := config.ApproverTokenPath(s.DataDir)
	if created {
		logger.Info("created the approver token; approve, deny, rules, mode, watch and audit read it on this machine", "file", path)
	} else {
		logger.Debug("using the approver token", "file", path)
	}
	return map[string]string{tok: config.LocalApprover}, nil
}

func rulesName(s config.Settings) string {
	if s.Rules == "" {
		return "(default rules)"
	}
	return s.Rules
}

package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"

	"approvalbot/gate"
)

// LoadPolicy reads and compiles the rules: the file in s, or the embedded
// defaults, with the data directory as a secret and protected (paths no
// call may write: the rules file, the binary, agents' hook settings) as
// built-in denials.
func LoadPolicy(s Settings, home string, protected []string) (*gate.Policy, error) {
	var spec gate.PolicySpec
	var err error
	if s.Rules != "" {
		spec, err = LoadRules(s.Rules, home)
	} else {
		spec, err = ParseRules("(default rules)", DefaultRules(), home)
	}
	if err != nil {
		return nil, err
	}
	spec.Protected = append(spec.Protected, protected...)
	spec.Secrets = append(spec.Secrets, s.DataDir)
	spec.Home = home
	return gate.Compile(spec)
}

// RulesStamp identifies a version of a file by its content (SHA-256), so a
// replacement with the same size and mtime (`cp -p`, `rsync -a`, a symlink
// swap) is noticed; a rules file is small, and read every poll. A missing
// or unreadable file has its own stamp so it is noticed (and reported as
// broken).
func RulesStamp(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// PolicyTarget takes a reloaded policy, or the reason the rules file could
// not be used (the gate).
type PolicyTarget interface {
	SetPolicy(*gate.Policy)
	SetRulesError(string)
}

// WatchRules polls the rules file every interval until ctx ends; when its
// content differs from last it loads it again with load. A broken file
// keeps the last good rules and is reported through t (health, doctor).
func WatchRules(ctx context.Context, path string, load func() (*gate.Policy, error), t PolicyTarget, last string, interval time.Duration, logger *slog.Logger) {
	if path == "" {
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		stamp := RulesStamp(path)
		if stamp == last {
			continue
		}
		last = stamp
		p, err := load()
		if err != nil {
			msg := fmt.Sprintf("rules file %s is broken; keeping the last good rules: %v", path, err)
			logger.Error("RULES NOT RELOADED", "err", msg)
			t.SetRulesError(msg)
			continue
		}
		t.SetPolicy(p)
		t.SetRulesError("")
		logger.Info("rules reloaded", "file", path)
	}
}

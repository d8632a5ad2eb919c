package main

import (
	"context"
	"log/slog"

	"approvalbot/api"
	"approvalbot/config"
	"approvalbot/gate"
)

// startFrontends builds the configured chat frontends, registers them with
// the gate and starts their loops. It returns their names.
func startFrontends(ctx context.Context, e *env, s config.Settings, g *gate.Gate, m *api.Metrics, logger *slog.Logger) ([]string, error) {
	var names []string
	return names, nil
}

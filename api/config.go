package api

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// Defaults for Config.
const (
	DefaultMaxBody   = 1 << 20          // 1 MiB: a tool input larger than this is not something to approve on a phone
	DefaultMaxWait   = 10 * time.Minute // the default approval timeout; a longer wait only ties up a connection
	DefaultHeartbeat = 15 * time.Second // SSE comment interval, below common proxy idle timeouts (30-60s)
	maxAuditPage     = 10000            // entries per GET /v1/audit
	defaultAuditPage = 1000
)

// Config configures a Server.
type Config struct {
	// AgentTokens maps a bearer token to the agent it speaks for
	// (APPROVALBOT_API_TOKENS). An agent token may submit calls and read or
	// cancel its own approvals, nothing else.
	AgentTokens map[string]string
	// AdminTokens maps a bearer token to an approver name
	// (APPROVALBOT_ADMIN_TOKENS). Admin tokens may do everything.
	AdminTokens map[string]string
	// Open lets requests without a token act as the admin "local". Set it
	// only when the listener is loopback (see IsLoopback); it is ignored
	// when any token is configured.
	Open bool
	// MaxBody limits request bodies (DefaultMaxBody when 0).
	MaxBody int64
	// MaxWait caps ?wait= (DefaultMaxWait when 0).
	MaxWait time.Duration
	// Heartbeat is the interval of SSE keep-alive comments (DefaultHeartbeat when 0).
	Heartbeat time.Duration
	// Metrics receives the server's counters; NewServer makes one when nil.
	// Pass one in to share it with the frontends.
	Metrics *Metrics
}

// ParseTokens parses "name:token,name:token" (APPROVALBOT_API_TOKENS,
// APPROVALBOT_ADMIN_TOKENS) into a map from token to name. Whitespace around
// items is ignored; an empty string is no tokens. Errors never contain a token.
func ParseTokens(s string) (map[string]string, error) {
	out := map[string]string{}
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, token, ok := strings.Cut(item, ":")
		name, token = strings.TrimSpace(name), strings.TrimSpace(token)
		if !ok || name == "" || token == "" {
			return nil, fmt.Errorf("token list item %d: want name:token", i+1)
		}
		if _, dup := out[token]; dup {
			return nil, fmt.Errorf("token list item %d (%s): token used twice", i+1, name)
		}
		out[token] = name
	}
	return out, nil
}

// IsLoopback reports whether a listen address ("127.0.0.1:8754",
// "localhost:8754", "[::1]:8754") only accepts connections from this
// machine. An empty host (":8754") listens everywhere and is not loopback.
func IsLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		host = listen
	}
	return isLoopbackHost(host)
}

func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

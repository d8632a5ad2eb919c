package config

import (
	"strings"
	"testing"
)

// TestTokenSettings: a malformed token list names the item and never shows
// a token; short tokens and the .env.example placeholders are refused.
func TestTokenSettings(t *testing.T) {
	const secret = "s3cr3t-value-0123456789"
	tests := []struct {
		name, api, admin, want string
	}{
		{"malformed item", "a:" + secret + ",claude=" + secret, "", "item 2 of the list is not name:token"},
		{"empty name", ":" + secret, "", "item 1 of the list is not name:token"},
		{"short", "claude:short", "", "shorter than 16 characters"},
		{"agent placeholder", "claude:change-me-to-a-long-random-token", "", "placeholder from .env.example"},
		{"admin placeholder", "", "me:change-me-to-another-long-random-token", "placeholder from .env.example"},
		{"good", "claude:" + secret, "me:" + secret + "x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("APPROVALBOT_DATA_DIR", t.TempDir())
			t.Setenv("APPROVALBOT_API_TOKENS", tt.api)
			t.Setenv("APPROVALBOT_ADMIN_TOKENS", tt.admin)
			_, err := Load()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Load: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Load: %v, want an error saying %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows a token: %v", err)
			}
		})
	}
}

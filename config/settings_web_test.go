package config

import (
	"strings"
	"testing"
)

// TestValidateWebSettings: the public URL and the TLS files are checked
// at start, not when the first phone opens a link.
func TestValidateWebSettings(t *testing.T) {
	base := Settings{Timeout: 1, Listen: "127.0.0.1:8754", LogLevel: "info"}
	cases := []struct {
		name    string
		set     func(*Settings)
		wantErr string
	}{
		{"none", func(*Settings) {}, ""},
		{"https public URL", func(s *Settings) { s.PublicURL = "https://box.tailnet.ts.net:8754" }, ""},
		{"trailing slash", func(s *Settings) { s.PublicURL = "http://192.168.1.20:8754/" }, ""},
		{"no scheme", func(s *Settings) { s.PublicURL = "box:8754" }, "PUBLIC_URL"},
		{"a path", func(s *Settings) { s.PublicURL = "https://example.com/approvals" }, "PUBLIC_URL"},
		{"ftp", func(s *Settings) { s.PublicURL = "ftp://example.com" }, "PUBLIC_URL"},
		{"cert and key", func(s *Settings) { s.TLSCert, s.TLSKey = "c.pem", "k.pem" }, ""},
		{"cert alone", func(s *Settings) { s.TLSCert = "c.pem" }, "TLS_KEY"},
		{"key alone", func(s *Settings) { s.TLSKey = "k.pem" }, "TLS_CERT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			tc.set(&s)
			err := s.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one naming %s", err, tc.wantErr)
			}
		})
	}
}

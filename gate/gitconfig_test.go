package gate

import "testing"

// TestGitConfigValue: values read as git reads them (git config --get
// agrees on each of these).
func TestGitConfigValue(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{" ../team.gitconfig ; shared team settings", "../team.gitconfig", true},
		{" .githooks # team hooks", ".githooks", true},
		{`../"x"`, "../x", true},
		{`"a ; b" c`, "a ; b c", true},
		{`a\\b`, `a\b`, true},
		{`a\"b`, `a"b`, true},
		{`x;`, "x", true},
		{`"open`, "open", false},
		{"  spaced  value  ", "spaced  value", true},
	} {
		got, ok := gitConfigValue(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("gitConfigValue(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

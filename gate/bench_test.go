package gate_test

import (
	"fmt"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"approvalbot/gate"
)

// benchSpec is a generated 200-rule file: a realistic mix of shell, path,
// MCP and catch-all rules, with the rules the benchmark's commands match
// near the top, so that a last-match-wins scan walks most of the file.
func benchSpec() gate.PolicySpec {
	spec := gate.PolicySpec{File: "bench.jsonc", Home: "/home/u", Protected: []string{"/home/u/.config/approvalbot"}}
	add := func(tool, pattern string, a gate.Action) {
		spec.Rules = append(spec.Rules, gate.RuleSpec{Tool: tool, Pattern: pattern, Action: a, File: "bench.jsonc", Line: len(spec.Rules) + 1})
	}
	add("*", "*", gate.Ask)
	add("Bash", "*", gate.Ask)
	add("Bash", "git status *", gate.Allow)
	add("Bash", "git commit *", gate.Allow)
	add("Bash", "git push *", gate.Allow)
	for i := 0; len(spec.Rules) < 120; i++ {
		switch i % 6 {
		case 0:
			add("Bash", fmt.Sprintf("tool%d *", i), gate.Allow)
		case 1:
			add("Bash", fmt.Sprintf("npm run script%d", i), gate.Allow)
		case 2:
			add("Bash", fmt.Sprintf("docker * --name c%d*", i), gate.Ask)
		case 3:
			add("Bash", fmt.Sprintf("rm -rf /srv/data%d/*", i), gate.Deny)
		case 4:
			add("Bash", fmt.Sprintf("kubectl {get,describe} pod%d *", i), gate.Allow)
		case 5:
			add("Bash", fmt.Sprintf("make target%d", i), gate.Allow)
		}
	}
	for i := 0; len(spec.Rules) < 170; i++ {
		switch i % 5 {
		case 0:
			add("Read", fmt.Sprintf("*.secret%d", i), gate.Deny)
		case 1:
			add("{Write,Edit}", fmt.Sprintf("./gen%d/*", i), gate.Ask)
		case 2:
			add("Read", fmt.Sprintf("~/.config/app%d/*", i), gate.Deny)
		case 3:
			add("Write", fmt.Sprintf("*/vendor%d/*", i), gate.Deny)
		case 4:
			add("Grep", fmt.Sprintf("/opt/p%d/*", i), gate.Allow)
		}
	}
	for i := 0; len(spec.Rules) < 200; i++ {
		add(fmt.Sprintf("mcp__server%d__*", i), "*", gate.Ask)
	}
	return spec
}

func BenchmarkEvaluate(b *testing.B) {
	spec := benchSpec()
	if len(spec.Rules) != 200 {
		b.Fatalf("%d rules", len(spec.Rules))
	}
	p, err := gate.Compile(spec)
	if err != nil {
		b.Fatal(err)
	}
	// Not git add: what it stages is read from disk, and /work/proj is
	// not on this machine.
	call := shellCall(`git status && git commit -m "x" && git push`)
	if ev := p.Evaluate(call, gate.Env{}); ev.Decision != gate.Allow || len(ev.Commands) != 3 {
		b.Fatalf("%s %s", ev.Decision, verdicts(ev))
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Evaluate(call, gate.Env{})
	}
}

func BenchmarkEvaluateAsk(b *testing.B) {
	p, err := gate.Compile(benchSpec())
	if err != nil {
		b.Fatal(err)
	}
	call := shellCall(`git status && curl -s https://example.com | jq .`)
	b.ReportAllocs()
	for b.Loop() {
		p.Evaluate(call, gate.Env{})
	}
}

func BenchmarkEvaluatePath(b *testing.B) {
	p, err := gate.Compile(benchSpec())
	if err != nil {
		b.Fatal(err)
	}
	call := pathCall("Write", "file_path", "src/main.go")
	b.ReportAllocs()
	for b.Loop() {
		p.Evaluate(call, gate.Env{})
	}
}

// BenchmarkEvaluateFloor is the floor BenchmarkEvaluate is read against:
// a bare bash parse of the same line (machines here are shared and noisy,
// so report the ratio, not the time).
func BenchmarkEvaluateFloor(b *testing.B) {
	line := `git status && git commit -m "x" && git push`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), ""); err != nil {
			b.Fatal(err)
		}
	}
}

// longLine is about 300 KiB of distinct sub-commands that each ask.
func longLine() string {
	var sb strings.Builder
	for i := 0; sb.Len() < 300<<10; i++ {
		fmt.Fprintf(&sb, "tool-%d --flag value-%d ./path/%d && ", i, i, i)
	}
	sb.WriteString("true")
	return sb.String()
}

// BenchmarkEvaluateLong checks that evaluation stays linear in the number of
// sub-commands: read it against BenchmarkEvaluateLongFloor, a bare parse of
// the same line.
func BenchmarkEvaluateLong(b *testing.B) {
	p, err := gate.Compile(benchSpec())
	if err != nil {
		b.Fatal(err)
	}
	call := shellCall(longLine())
	if ev := p.Evaluate(call, gate.Env{}); ev.Decision != gate.Ask || len(ev.Always) < 1000 {
		b.Fatalf("%s with %d always patterns", ev.Decision, len(ev.Always))
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Evaluate(call, gate.Env{})
	}
}

func BenchmarkEvaluateLongFloor(b *testing.B) {
	line := longLine()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), ""); err != nil {
			b.Fatal(err)
		}
	}
}

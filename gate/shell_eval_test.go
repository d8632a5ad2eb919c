package gate_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"approvalbot/gate"
	"approvalbot/shell"
)

func bashPolicy(t testing.TB, rules ...ruleArgs) *gate.Policy {
	return compile(t, specOf(rules...))
}

func TestShellEvaluation(t *testing.T) {
	p := bashPolicy(t,
		r("Bash", "*", gate.Ask),
		r("Bash", "git status *", gate.Allow),
		r("Bash", "git log *", gate.Allow),
		r("Bash", "echo *", gate.Allow),
		r("Bash", "find *", gate.Allow),
		r("Bash", "npm test *", gate.Allow),
		r("Bash", "rm *", gate.Deny),
		r("Bash", "timeout 99 *", gate.Deny),
		r("Write", "./*", gate.Allow),
		r("Write", "*.env", gate.Deny),
	)
	tests := []struct {
		name  string
		cmd   string
		want  gate.Action
		parts []gate.Action // per verdict, in order
	}{
		{"allowed", "git status", gate.Allow, []gate.Action{gate.Allow}},
		{"trailing star matches bare", "git log", gate.Allow, []gate.Action{gate.Allow}},
		{"word boundary", "git logout", gate.Ask, []gate.Action{gate.Ask}},
		{"every part judged", "git status && curl x", gate.Ask, []gate.Action{gate.Allow, gate.Ask}},
		{"deny wins", "git status; rm -rf x", gate.Deny, []gate.Action{gate.Allow, gate.Deny}},
		{"substitution judged", "echo $(rm x)", gate.Deny, nil},
		{"hazard turns allow into ask", "find . -delete", gate.Ask, []gate.Action{gate.Ask}},
		{"dynamic name asks", "$CMD status", gate.Ask, []gate.Action{gate.Ask}},
		{"alt text denies", "/bin/rm -rf x", gate.Deny, []gate.Action{gate.Deny}},
		{"redirect inside project allowed", "echo hi > out.txt", gate.Allow, []gate.Action{gate.Allow, gate.Allow}},
		{"redirect outside asks", "echo hi > /tmp/out.txt", gate.Ask, []gate.Action{gate.Allow, gate.Ask}},
		{"redirect to secret denied", "echo K=V >> .env", gate.Deny, []gate.Action{gate.Allow, gate.Deny}},
		{"dev null is no write", "git status 2>/dev/null", gate.Allow, []gate.Action{gate.Allow}},
		{"dynamic redirect asks", "echo hi > $F", gate.Ask, []gate.Action{gate.Allow, gate.Ask}},
		// A benign wrapper is judged through its inner command; its own
		// text can still deny.
		{"benign wrapper judged by inner", "timeout 5 npm test", gate.Allow, []gate.Action{gate.Allow}},
		{"wrapper text can deny", "timeout 99 npm test", gate.Deny, []gate.Action{gate.Deny}},
		{"wrapper with denied inner", "nice -n 5 rm x", gate.Deny, []gate.Action{gate.Deny}},
		// Command strings and privilege are judged themselves too.
		{"bash -c is judged itself", "bash -c 'git status'", gate.Ask, []gate.Action{gate.Ask, gate.Allow}},
		{"eval never allows", "eval 'git status'", gate.Ask, []gate.Action{gate.Ask, gate.Allow}},
		{"sudo is judged itself", "sudo git status", gate.Ask, []gate.Action{gate.Ask, gate.Allow}},
		{"parse error asks", "git status &&& x", gate.Ask, nil},
		{"control character asks", "git status\r", gate.Ask, nil},
		{"bidi asks", "git status \u202e", gate.Ask, nil},
		{"no command asks", "# just a comment", gate.Ask, nil},
		{"empty command asks", "   ", gate.Ask, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := p.Evaluate(shellCall(tt.cmd), gate.Env{})
			if ev.Decision != tt.want {
				t.Fatalf("%q: %s (%s), want %s; %s", tt.cmd, ev.Decision, ev.Reason, tt.want, verdicts(ev))
			}
			if tt.parts != nil {
				if len(ev.Commands) != len(tt.parts) {
					t.Fatalf("%q: verdicts %s, want %d", tt.cmd, verdicts(ev), len(tt.parts))
				}
				for i, w := range tt.parts {
					if ev.Commands[i].Decision != w {
						t.Errorf("%q part %d: %s, want %s; %s", tt.cmd, i, ev.Commands[i].Decision, w, verdicts(ev))
					}
				}
			}
			if ev.Kind != gate.KindShell || ev.Rule == nil || ev.Reason == "" {
				t.Errorf("kind %s rule %v reason %q", ev.Kind, ev.Rule, ev.Reason)
			}
			for _, v := range ev.Commands {
				if v.Rule == nil || v.Reason == "" {
					t.Errorf("verdict without rule or reason: %+v", v)
				}
			}
		})
	}
}

func TestShellDynamicStillDenies(t *testing.T) {
	p := bashPolicy(t, r("Bash", "*", gate.Allow), r("Bash", "eval *", gate.Deny))
	ev := p.Evaluate(shellCall(`eval "$X"`), gate.Env{})
	if ev.Decision != gate.Deny || ev.Commands[0].Dynamic == "" {
		t.Fatalf("%s; %s", ev.Decision, verdicts(ev))
	}
	p = bashPolicy(t, r("Bash", "*", gate.Allow), r("Bash", "rm *", gate.Deny))
	if ev := p.Evaluate(shellCall(`x=rm; $x -rf /tmp/x`), gate.Env{}); ev.Decision == gate.Allow {
		t.Fatalf("dynamic name allowed: %s", verdicts(ev))
	}
}

func TestShellAlwaysPatterns(t *testing.T) {
	p := bashPolicy(t, r("Bash", "*", gate.Ask), r("Bash", "git status *", gate.Allow))
	tests := []struct {
		cmd  string
		want []string
	}{
		// Only the parts not already allowed, deduplicated.
		{"git status && git push origin main", []string{"git push *"}},
		{"git push a && git push b", []string{"git push *"}},
		{"cat README.md | wc -l", []string{"cat *", "wc *"}},
		// A part no Always can lift: the button approves once.
		{"find . -delete", []string{"find . -delete"}}, // a hazard: only the exact command
		{"$X status", nil},
		{"python3 -c 'print(1)'", []string{`python3 -c 'print(1)'`}},
		// A write outside the project is saved as that exact path.
		{"git status > /tmp/x.log", []string{"/tmp/x.log"}},
	}
	for _, tt := range tests {
		ev := p.Evaluate(shellCall(tt.cmd), gate.Env{})
		if ev.Decision != gate.Ask {
			t.Errorf("%q: %s", tt.cmd, ev.Decision)
			continue
		}
		if strings.Join(ev.Always, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%q: always %q, want %q", tt.cmd, ev.Always, tt.want)
		}
		if len(ev.Always) != len(ev.AlwaysRules) {
			t.Errorf("%q: always %q vs rules %+v", tt.cmd, ev.Always, ev.AlwaysRules)
		}
	}
	// Writes are saved for the Write tool; commands for the call's tool.
	ev := p.Evaluate(shellCall("git push > /tmp/x"), gate.Env{})
	want := []gate.AlwaysPattern{{Tool: "Bash", Pattern: "git push *"}, {Tool: "Write", Pattern: "/tmp/x"}}
	if fmt.Sprint(ev.AlwaysRules) != fmt.Sprint(want) {
		t.Errorf("always rules %+v, want %+v", ev.AlwaysRules, want)
	}
}

func TestShellSelfProtection(t *testing.T) {
	spec := specOf(r("*", "*", gate.Allow))
	spec.Protected = []string{"/home/u/.config/approvalbot", "/work/proj/rules.jsonc", "/home/u/.local/share/approvalbot"}
	spec.Secrets = []string{"/home/u/.local/share/approvalbot"}
	p := compile(t, spec)
	tests := []struct {
		cmd  string
		want gate.Action
	}{
		{"echo x > ~/.config/approvalbot/rules.jsonc", gate.Deny},
		{"echo x >> /home/u/.config/approvalbot/x", gate.Deny},
		{"echo '{}' > rules.jsonc", gate.Deny},
		{"rm rules.jsonc", gate.Deny},
		{"rm -rf ~/.config", gate.Deny},
		{"mv ~/.config/approvalbot /tmp/x", gate.Deny},
		{"cp /tmp/evil.jsonc ./rules.jsonc", gate.Deny},
		{"tee rules.jsonc < /tmp/x", gate.Deny},
		{"sed -i s/deny/allow/ rules.jsonc", gate.Deny},
		{"sudo truncate -s0 /work/proj/rules.jsonc", gate.Deny},
		{"dd if=/dev/zero of=/work/proj/rules.jsonc", gate.Deny},
		// Canonical paths: /proc/self/root, /proc/self/cwd, cd.
		{"echo x > /proc/self/root/work/proj/rules.jsonc", gate.Deny},
		{"echo x > /proc/self/cwd/rules.jsonc", gate.Deny},
		{"cd /work && echo x > proj/rules.jsonc", gate.Deny},
		{"cd ~/.config && echo x > approvalbot/rules.jsonc", gate.Deny},
		{"pushd ~/.claude && echo '{}' > settings.json", gate.Deny},
		// Every supported agent's hook settings, user and project level.
		{"echo '{}' > .claude/settings.json", gate.Deny},
		{"echo '{}' > .claude/settings.local.json", gate.Deny},
		{"echo '{}' > ~/.claude/settings.json", gate.Deny},
		{"echo x > .codex/hooks.json", gate.Deny},
		{"echo x > ~/.gemini/settings.json", gate.Deny},
		{"echo x > .cursor/hooks.json", gate.Deny},
		{"echo x > .github/hooks/hooks.json", gate.Deny},
		// Copilot CLI's repository settings take hooks and disableAllHooks.
		{`echo '{"disableAllHooks":true}' > .github/copilot/settings.local.json`, gate.Deny},
		{"echo '{}' > .github/copilot/settings.json", gate.Deny},
		{"cd .github && echo '{}' > copilot/settings.local.json", gate.Deny},
		{"echo x > .opencode/plugin/approvalbot.js", gate.Deny},
		{"cp -t ~/.claude settings.json", gate.Deny},
		{"rm -rf .claude", gate.Deny},
		// approvalbot's own deciding commands: the CLI reads the approver
		// credential itself, so the agent would answer its own prompts.
		{"approvalbot approve ap-1", gate.Deny},
		{"approvalbot deny ap-1 --reason x", gate.Deny},
		{"approvalbot approve --session s1", gate.Deny},
		{"approvalbot mode claude-code approve_all", gate.Deny},
		{"approvalbot rules add --agent a --tool Bash --pattern '*'", gate.Deny},
		{"approvalbot rules rm r1", gate.Deny},
		{"approvalbot suggest --apply --yes", gate.Deny},
		{"approvalbot watch", gate.Deny},
		{"approvalbot ui-link", gate.Deny},
		{"approvalbot backup /tmp/db", gate.Deny},
		{"approvalbot install claude --url http://127.0.0.1:1", gate.Deny},
		{"approvalbot serve", gate.Deny},
		{"env approvalbot approve ap-1", gate.Deny},
		{"/usr/local/bin/approvalbot approve ap-1", gate.Deny},
		{"bash -c 'approvalbot approve ap-1'", gate.Deny},
		{"echo ap-1 | xargs approvalbot approve", gate.Deny},
		// Reads of the data dir (the approver credential) and of process
		// environments (the daemon's tokens).
		{"cat ~/.local/share/approvalbot/approver.token", gate.Deny},
		{"cat < /home/u/.local/share/approvalbot/approver.token", gate.Deny},
		{"cat /proc/1234/environ", gate.Deny},
		{"cat /proc/self/environ", gate.Deny},
		{"grep -r token ~/.local/share", gate.Deny},
		{"cat /proc/*/environ", gate.Deny},
		// Shell connections to this machine could reach the daemon.
		{"printf 'POST /v1/approvals/x/approve' > /dev/tcp/127.0.0.1/8754", gate.Deny},
		{"exec 3<>/dev/tcp/localhost/8754", gate.Deny},
		// Reading and unrelated writes are fine.
		{"cat rules.jsonc", gate.Allow},
		{"sed -n 1p rules.jsonc", gate.Allow},
		{"cp rules.jsonc.bak /tmp/", gate.Allow},
		{"approvalbot check -- ls", gate.Allow},
		{"approvalbot pending", gate.Allow},
		{"approvalbot rules list", gate.Allow},
		{"approvalbot mode claude-code", gate.Allow},
		{"approvalbot audit", gate.Allow},
		{"rm -rf /tmp/x", gate.Allow},
		{"git commit -m 'update .claude/settings.json docs'", gate.Allow},
		{"echo x > README.md", gate.Allow},
		{"echo x > .claude/notes.md", gate.Allow},
	}
	for _, tt := range tests {
		for _, mode := range []gate.Mode{"", gate.ModeApproveAll} {
			ev := p.Evaluate(shellCall(tt.cmd), gate.Env{Mode: mode})
			if ev.Decision != tt.want {
				t.Errorf("%q (mode %q): %s (%s), want %s", tt.cmd, mode, ev.Decision, ev.Reason, tt.want)
			}
			if tt.want == gate.Deny && ev.Rule.Layer != gate.LayerBuiltin {
				t.Errorf("%q: denied by %+v, want builtin", tt.cmd, ev.Rule)
			}
		}
	}
	// What the gate cannot resolve asks, and approve_all does not answer
	// it: a relative writer argument without a cwd, a write through
	// /dev/fd, a dynamic target, a connection elsewhere, git internals.
	for _, tt := range []struct{ cmd, cwd string }{
		{"rm rules.jsonc", ""},
		{"echo x > /dev/fd/3", "/work/proj"},
		{"echo x > $F", "/work/proj"},
		{"echo x > /dev/tcp/example.com/80", "/work/proj"},
		{"echo x > .git/hooks/pre-commit", "/work/proj"},
		{"cd $D && rm rules.jsonc", "/work/proj"},
		{"cd /tmp; rm -rf x", "/work/proj"},
		// What agents load and run by themselves: subagents and skills
		// (hooks in their front matter), hook scripts, plugins, MCP servers.
		{"echo x > .claude/agents/reviewer.md", "/work/proj"},
		{"cp /tmp/s.md .claude/skills/fmt/SKILL.md", "/work/proj"},
		{"echo x > .claude/hooks/format.sh", "/work/proj"},
		{"echo '{}' > ~/.claude.json", "/work/proj"},
		{"echo '{}' > .mcp.json", "/work/proj"},
		{"echo '{}' > opencode.json", "/work/proj"},
		{"echo x > .opencode/agent/a.md", "/work/proj"},
		{"echo '{}' > .cursor/mcp.json", "/work/proj"},
		{"echo x > ~/.gemini/extensions/e/gemini-extension.json", "/work/proj"},
	} {
		in, _ := json.Marshal(map[string]string{"command": tt.cmd})
		for _, mode := range []gate.Mode{"", gate.ModeApproveAll} {
			ev := p.Evaluate(gate.Call{Tool: "Bash", Input: in, Cwd: tt.cwd}, gate.Env{Mode: mode})
			if ev.Decision == gate.Allow || ev.Decision == gate.Ask && !ev.Uncertain {
				t.Errorf("%q (mode %q): %s uncertain=%v (%s), want an ask only a person answers", tt.cmd, mode, ev.Decision, ev.Uncertain, ev.Reason)
			}
		}
	}
}

func TestShellInputShapes(t *testing.T) {
	p := bashPolicy(t, r("*", "*", gate.Ask), r("{Bash,shell,exec_command,run_shell_command}", "git status *", gate.Allow))
	tests := []struct {
		tool  string
		input string
		want  gate.Action
	}{
		{"shell", `{"command":["bash","-lc","git status"],"workdir":"/work/proj"}`, gate.Allow},
		{"shell", `{"command":["git","status"]}`, gate.Allow},
		{"shell", `{"command":["bash","-lc","git status; rm -rf x"]}`, gate.Ask},
		{"exec_command", `{"cmd":"git status"}`, gate.Allow},
		{"run_shell_command", `{"command":"git status","description":"x"}`, gate.Allow},
		{"Bash", `{"command":"git status","timeout":5}`, gate.Allow},
	}
	for _, tt := range tests {
		ev := p.Evaluate(gate.Call{Tool: tt.tool, Input: json.RawMessage(tt.input), Cwd: "/work/proj"}, gate.Env{})
		if ev.Decision != tt.want {
			t.Errorf("%s %s: %s (%s), want %s", tt.tool, tt.input, ev.Decision, ev.Reason, tt.want)
		}
	}
	// workdir moves where the command starts, not the project: a write
	// relative to it lands there, and is outside the project.
	p = bashPolicy(t, r("Bash", "echo *", gate.Allow), r("Write", "./*", gate.Allow))
	ev := p.Evaluate(gate.Call{Tool: "Bash", Input: json.RawMessage(`{"command":"echo > x","workdir":"/tmp"}`), Cwd: "/work/proj"}, gate.Env{})
	if ev.Decision != gate.Ask || ev.Commands[1].Subject != "/tmp/x" || !ev.OutsideProject {
		t.Errorf("workdir outside: %s %s", ev.Decision, verdicts(ev))
	}
	ev = p.Evaluate(gate.Call{Tool: "Bash", Input: json.RawMessage(`{"command":"echo > x","workdir":"sub"}`), Cwd: "/work/proj"}, gate.Env{})
	if ev.Decision != gate.Allow || ev.Commands[1].Subject != "/work/proj/sub/x" {
		t.Errorf("workdir inside: %s %s", ev.Decision, verdicts(ev))
	}
	// Gemini CLI's dir_path (and its older directory) are the same: an
	// agent's settings written from there are denied; two that disagree ask.
	for _, in := range []string{`{"command":"echo {} > settings.json","dir_path":".claude"}`,
		`{"command":"echo {} > settings.json","directory":"/work/proj/.claude"}`} {
		ev = p.Evaluate(gate.Call{Tool: "run_shell_command", Input: json.RawMessage(in), Cwd: "/work/proj"}, gate.Env{})
		if ev.Decision != gate.Deny {
			t.Errorf("%s: %s %s, want deny", in, ev.Decision, verdicts(ev))
		}
	}
	ev = p.Evaluate(gate.Call{Tool: "run_shell_command", Input: json.RawMessage(`{"command":"echo > x","dir_path":"a","workdir":"b"}`), Cwd: "/work/proj"}, gate.Env{})
	if ev.Decision != gate.Ask {
		t.Errorf("two directories: %s %s, want ask", ev.Decision, verdicts(ev))
	}
	// An argv with shell options other than -c/-lc is judged whole.
	ev = p.Evaluate(gate.Call{Tool: "Bash", Input: json.RawMessage(`{"command":["bash","-kc","echo hi PS4=x"]}`), Cwd: "/work/proj"}, gate.Env{})
	if ev.Decision == gate.Allow {
		t.Errorf("bash -kc argv: %s %s", ev.Decision, verdicts(ev))
	}
	// $(< FILE) reads with no command behind it: without Read rules, it asks.
	ev = p.Evaluate(gate.Call{Tool: "Bash", Input: json.RawMessage(`{"command":"echo $(< /home/u/.kube/config)"}`), Cwd: "/work/proj"}, gate.Env{})
	if ev.Decision == gate.Allow {
		t.Errorf("$(< file): %s %s", ev.Decision, verdicts(ev))
	}
	// command and cmd together: neither is judged alone.
	ev = p.Evaluate(gate.Call{Tool: "exec_command", Input: json.RawMessage(`{"command":"echo hi","cmd":"touch /tmp/p"}`), Cwd: "/work/proj"}, gate.Env{})
	if ev.Decision == gate.Allow {
		t.Errorf("command and cmd: %s %s", ev.Decision, verdicts(ev))
	}
}

// FuzzEvaluateShell: under an allow-all rule, a line the analyser reports
// as dynamic, unsafe or hazardous must never be allowed, and Evaluate never
// panics.
func FuzzEvaluateShell(f *testing.F) {
	for _, s := range []string{
		"git status", "ls -la | wc -l", "$CMD x", "eval \"$X\"", "find . -delete", "sed -i s/a/b/ f",
		"echo $(rm -rf /)", "a=rm; $a x", "bash -c \"$S\"", "git -c core.pager=x log", "cat <<EOF\n$(id)\nEOF",
		"echo hi > $F", "x\r", "ls \u202e", "timeout 5 $X", "sudo -u $U ls", "env $V ls", "`id`",
	} {
		f.Add(s)
	}
	p := bashPolicy(f, r("Bash", "*", gate.Allow), r("Write", "*", gate.Allow))
	f.Fuzz(func(t *testing.T, cmd string) {
		call := shellCall(cmd)
		ev := p.Evaluate(call, gate.Env{})
		if !ev.Decision.Valid() {
			t.Fatalf("invalid decision %q", ev.Decision)
		}
		if ev.Decision != gate.Allow {
			return
		}
		// Analyze what the gate saw: JSON encoding replaces invalid UTF-8.
		var in struct{ Command string }
		if err := json.Unmarshal(call.Input, &in); err != nil {
			t.Fatal(err)
		}
		cmd = in.Command
		a := shell.Analyze(cmd, shell.Options{Cwd: "/work/proj", Home: "/home/u"})
		if a.Unsafe != "" {
			t.Fatalf("allowed an unsafe line (%s): %q", a.Unsafe, cmd)
		}
		if len(a.Commands) == 0 {
			t.Fatalf("allowed a line without commands: %q", cmd)
		}
		for _, c := range a.Commands {
			if c.Dynamic != "" || c.Hazard != "" {
				t.Fatalf("allowed %q: command %q dynamic=%q hazard=%q", cmd, c.Text, c.Dynamic, c.Hazard)
			}
		}
		for _, w := range a.Writes {
			if w.Dynamic {
				t.Fatalf("allowed a dynamic write: %q", cmd)
			}
		}
	})
}

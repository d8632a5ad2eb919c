//go:build e2e && linux

// Command bashdiff-jail is the sandbox of the bashdiff differential test.
// One binary, two roles:
//
//   - `bashdiff-jail serve HOSTDIR`, started by the test in fresh user,
//     mount, network and PID namespaces (it is PID 1 there), builds a
//     chroot on a read-only tmpfs: /usr and /etc read-only, a minimal
//     /dev, /proc, HOSTDIR/stubs read-only at /stubs, and tmpfs at /tmp
//     and /sandbox (the project and home of every line). It
//     then reads requests (JSON lines: a command line and a timeout) on
//     stdin and, for each, resets the sandbox, runs the line with the real
//     bash under xtrace, and answers a JSON line with the trace, the
//     commands the stubs saw, the exit status and whether the canary
//     exists.
//   - Under any other name (a hard link in /stubs, or bind-mounted over
//     /usr/bin/sh and /usr/bin/bash), it is a stub: it appends its argv
//     to /.bashdiff/stubs, then runs the real program (harmless
//     tools, which only ever see the sandbox), re-enters the traced real
//     bash (sh, bash), unwraps itself (sudo, doas) or just exits 0
//     (programs that would reach the network or run project code).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Fixed paths inside the jail. The test analyzes lines with the same
// paths, so what the analyzer resolves is what bash sees.
// The sandbox is the only place a line can write besides /tmp; the stubs
// are read-only, and the logs live on their own tmpfs out of the way.
const (
	Sandbox     = "/sandbox"
	Proj        = Sandbox + "/proj"
	Home        = Sandbox + "/home"
	Canary      = Sandbox + "/pwned"
	Stubs       = "/stubs"
	Logs        = "/.bashdiff"
	StubLog     = Logs + "/stubs"
	TraceLog    = Logs + "/trace"
	ErrLog      = Logs + "/stderr"
	GitTemplate = Logs + "/gittemplate"
	RealBash    = "/.realbash"
	TraceFD     = 77
)

// real lists the programs whose stub runs the real program after logging:
// inside the jail they can only touch the sandbox, and running them shows
// the commands they start (find -exec, xargs, env, sort
// --compress-program, awk system(), git aliases and pagers, ...).
var real = map[string]bool{
	"cat": true, "ls": true, "grep": true, "egrep": true, "fgrep": true, "find": true, "sed": true, "awk": true,
	"mawk": true, "gawk": true, "head": true, "tail": true, "sort": true, "wc": true, "diff": true, "tar": true,
	"touch": true, "rm": true, "cp": true, "mv": true, "mkdir": true, "rmdir": true, "xargs": true, "env": true,
	"timeout": true, "nice": true, "nohup": true, "jq": true, "tr": true, "cut": true, "uniq": true, "tee": true,
	"basename": true, "dirname": true, "date": true, "stat": true, "chmod": true, "ln": true, "readlink": true,
	"realpath": true, "sleep": true, "echo": true, "printf": true, "true": true, "false": true, "test": true,
	"[": true, "pwd": true, "which": true, "seq": true, "od": true, "base64": true, "sha256sum": true,
	"md5sum": true, "file": true, "du": true, "stdbuf": true, "tac": true, "rev": true, "paste": true,
	"comm": true, "join": true, "fold": true, "nl": true, "split": true, "csplit": true, "expr": true,
	"xxd": true, "hexdump": true, "less": true, "more": true, "tree": true, "id": true, "whoami": true,
	"uname": true, "hostname": true, "git": true, "patch": true, "cmp": true, "install": true, "truncate": true,
	"shuf": true, "yes": true, "kill": true, "setsid": true, "chown": true, "dd": true, "gzip": true, "zcat": true,
}

// logOnly lists the programs whose stub only logs: they would reach the
// network or run project code.
var logOnly = []string{
	"go", "npm", "pnpm", "npx", "yarn", "node", "python", "python3", "pip", "pip3", "cargo", "make", "rg",
	"curl", "wget", "docker", "kubectl", "ssh", "scp", "rsync", "perl", "ruby", "deno", "bun", "gh", "zip",
	"unzip", "7z", "zsh", "fish", "ksh", "vim", "vi", "nano", "code", "open", "xdg-open", "nc", "ncat",
	"socat", "telnet", "ftp", "tsc", "eslint", "prettier", "pytest", "jest", "terraform", "aws", "gcloud",
	"systemctl", "service", "crontab", "at", "mail", "sendmail", "osascript", "powershell", "pwsh", "cmd",
}

// Shells re-enter the traced real bash.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "rbash": true}

// Names lists every stub name the test links into /sandbox/stubs.
func Names() []string {
	var ns []string
	for n := range real {
		ns = append(ns, n)
	}
	ns = append(ns, logOnly...)
	for n := range shells {
		ns = append(ns, n)
	}
	return append(ns, "sudo", "doas")
}

func main() {
	name := filepath.Base(os.Args[0])
	if name == "bashdiff-jail" {
		if len(os.Args) == 2 && os.Args[1] == "names" {
			for _, n := range Names() {
				fmt.Println(n)
			}
			return
		}
		if len(os.Args) == 3 && os.Args[1] == "serve" {
			if err := serve(os.Args[2]); err != nil {
				fmt.Fprintln(os.Stderr, "bashdiff-jail:", err)
				os.Exit(1)
			}
			return
		}
		fmt.Fprintln(os.Stderr, "usage: bashdiff-jail serve HOSTDIR | names")
		os.Exit(2)
	}
	// The stubs are hard links, so the kernel knows which one ran even
	// when argv0 lies (exec -a).
	if exe, err := os.Executable(); err == nil && filepath.Base(exe) != "bashdiff-jail" {
		name = filepath.Base(exe)
	}
	stub(name)
}

// stub logs argv (the program's name, then its arguments) and then plays
// its part.
func stub(name string) {
	args := os.Args[1:]
	logArgv(append([]string{name}, args...))
	switch {
	case shells[name]:
		// Long options must precede single-letter ones for bash.
		i := 0
		for i < len(args) && strings.HasPrefix(args[i], "--") && args[i] != "--" {
			i++
		}
		argv0 := "bash"
		if name != "bash" && name != "rbash" {
			argv0 = "sh"
		}
		nargs := append([]string{argv0}, args[:i]...)
		nargs = append(nargs, "-x")
		nargs = append(nargs, args[i:]...)
		execOrDie(RealBash, nargs)
	case name == "sudo" || name == "doas":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i], "-") {
			if args[i] == "--" {
				i++
				break
			}
			if args[i] == "-u" || args[i] == "-g" || args[i] == "-C" || args[i] == "-D" {
				i++
			}
			i++
		}
		if i >= len(args) {
			os.Exit(0)
		}
		p := lookPath(args[i])
		if p == "" {
			fmt.Fprintf(os.Stderr, "%s: %s: command not found\n", name, args[i])
			os.Exit(127)
		}
		execOrDie(p, args[i:])
	case real[name]:
		for _, dir := range []string{"/usr/bin", "/usr/sbin"} {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				execOrDie(p, os.Args)
			}
		}
	}
	os.Exit(0)
}

func lookPath(file string) string {
	if strings.Contains(file, "/") {
		return file
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, file)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func execOrDie(path string, argv []string) {
	err := syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "bashdiff stub: exec %s: %v\n", path, err)
	os.Exit(126)
}

// logArgv appends one record to the stub log in a single write: the
// number of words, then each word, each terminated by NUL.
func logArgv(argv []string) {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(argv)))
	b.WriteByte(0)
	for _, a := range argv {
		b.WriteString(a)
		b.WriteByte(0)
	}
	f, err := os.OpenFile(StubLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bashdiff stub: log:", err)
		return
	}
	_, _ = f.WriteString(b.String())
	_ = f.Close()
}

// Request is one line to run (bytes: a line need not be UTF-8).
type Request struct {
	Line      []byte `json:"line"`
	TimeoutMS int    `json:"timeout_ms"`
}

// Response is what running it showed.
type Response struct {
	Trace    []byte `json:"trace"` // bash's xtrace output, raw
	Stubs    []byte `json:"stubs"` // the stub log, raw
	Stderr   []byte `json:"stderr"`
	Exit     int    `json:"exit"`
	TimedOut bool   `json:"timed_out"`
	Canary   bool   `json:"canary"`
	Err      string `json:"err,omitempty"`
	// Durations in microseconds: sandbox reset, the line, its leftovers.
	ResetUS, RunUS, ReapUS int64
}

func serve(hostDir string) error {
	if os.Getpid() != 1 {
		return errors.New("serve must run as PID 1 of a new PID namespace")
	}
	if err := buildJail(hostDir); err != nil {
		return fmt.Errorf("building the jail: %w", err)
	}
	gitTemplate := GitTemplate
	makeGitTemplate(gitTemplate)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	// Tell the test the jail is ready.
	if err := out.Encode(Response{Err: "ready"}); err != nil {
		return err
	}
	for in.Scan() {
		var req Request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return err
		}
		if err := out.Encode(run(req, gitTemplate)); err != nil {
			return err
		}
	}
	return in.Err()
}

func must(err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// mountFlags returns the mount flags that a read-only remount of path must
// keep (a user namespace may not clear locked ones).
func mountFlags(path string) uintptr {
	var st syscall.Statfs_t
	if syscall.Statfs(path, &st) != nil {
		return 0
	}
	var fl uintptr
	for _, m := range []struct{ st, ms uintptr }{
		{2, syscall.MS_NOSUID}, {4, syscall.MS_NODEV}, {8, syscall.MS_NOEXEC},
		{1024, syscall.MS_NOATIME}, {2048, syscall.MS_NODIRATIME}, {4096, syscall.MS_RELATIME},
	} {
		if uintptr(st.Flags)&m.st != 0 {
			fl |= m.ms
		}
	}
	return fl
}

func bindRO(src, dst string) error {
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	err := syscall.Mount("", dst, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|mountFlags(src), "")
	return must(err, "read-only remount of "+dst)
}

func bindFile(src, dst string) error {
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	_ = f.Close()
	return must(syscall.Mount(src, dst, "", syscall.MS_BIND, ""), "bind "+src)
}

func buildJail(hostDir string) error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return must(err, "make / private")
	}
	root := filepath.Join(hostDir, "jailroot")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", root, "tmpfs", 0, "mode=755"); err != nil {
		return must(err, "tmpfs root")
	}
	for _, d := range []string{"usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		src := "/" + d
		fi, err := os.Lstat(src)
		if err != nil {
			continue
		}
		dst := filepath.Join(root, d)
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, dst); err != nil {
				return err
			}
			continue
		}
		if err := os.Mkdir(dst, 0o755); err != nil {
			return err
		}
		if err := bindRO(src, dst); err != nil {
			return err
		}
	}
	dev := filepath.Join(root, "dev")
	if err := os.Mkdir(dev, 0o755); err != nil {
		return err
	}
	for _, d := range []string{"null", "zero", "urandom", "random", "full"} {
		if err := bindFile("/dev/"+d, filepath.Join(dev, d)); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	proc := filepath.Join(root, "proc")
	if err := os.Mkdir(proc, 0o555); err != nil {
		return err
	}
	if err := syscall.Mount("proc", proc, "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return must(err, "mount proc")
	}
	for _, d := range []string{"tmp", Logs} {
		p := filepath.Join(root, d)
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		if err := syscall.Mount("tmpfs", p, "tmpfs", 0, "mode=1777"); err != nil {
			return must(err, "tmpfs "+d)
		}
	}
	stubs := filepath.Join(root, Stubs)
	if err := os.Mkdir(stubs, 0o755); err != nil {
		return err
	}
	if err := bindRO(filepath.Join(hostDir, "stubs"), stubs); err != nil {
		return err
	}
	sb := filepath.Join(root, Sandbox)
	if err := os.Mkdir(sb, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", sb, "tmpfs", 0, "mode=755"); err != nil {
		return must(err, "tmpfs "+Sandbox)
	}
	// The real bash, then the stub over every path a program may exec a
	// shell by (awk's system(), sed's e, git's pager and aliases use
	// /bin/sh).
	if err := bindFile("/usr/bin/bash", filepath.Join(root, RealBash)); err != nil {
		return err
	}
	stubBin := filepath.Join(hostDir, "stubs", "bashdiff-jail")
	for _, sh := range []string{"sh", "bash", "dash", "rbash"} {
		p := filepath.Join(root, "usr/bin", sh)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := syscall.Mount(stubBin, p, "", syscall.MS_BIND, ""); err != nil {
			return must(err, "bind the stub over "+p)
		}
	}
	if err := syscall.Mount("", root, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		return must(err, "read-only root")
	}
	if err := syscall.Chroot(root); err != nil {
		return must(err, "chroot")
	}
	return os.Chdir("/")
}

// makeGitTemplate prepares a repository that every run gets a copy of.
func makeGitTemplate(dir string) {
	_ = os.RemoveAll(dir)
	_ = os.MkdirAll(dir, 0o755)
	writeFixtures(dir)
	env := []string{"PATH=/usr/bin", "HOME=" + dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		c := exec.Command("/usr/bin/git", args...)
		c.Dir, c.Env = dir, env
		_ = c.Run()
	}
	// Fewer files to copy for every line.
	for _, d := range []string{"hooks", "logs", "info", "description"} {
		_ = os.RemoveAll(filepath.Join(dir, ".git", d))
	}
}

// writeFixtures puts a few files in a project dir so that globs and reads
// have something to find.
func writeFixtures(dir string) {
	files := map[string]string{
		"a.go":            "package main\n\n// TODO: a\nfunc main() {}\n",
		"b.go":            "package main\n\n// TODO: b\n",
		".env":            "SECRET=1\n",
		".env.example":    "SECRET=\n",
		"README.md":       "# readme\n\nTODO docs\n",
		"x.json":          "{\"a\": 1, \"b\": [1, 2]}\n",
		"my file.txt":     "spaces\n",
		"notes.txt":       "touch " + Canary + "\n",
		"sub/dir/c.txt":   "c\n",
		"sub/d.go":        "package sub\n",
		"Makefile":        "all:\n\t@echo all\n",
		"package.json":    "{\"name\": \"p\", \"scripts\": {\"test\": \"echo test\"}}\n",
		"script.sh":       "echo script\n",
		"list.txt":        "a.go\nb.go\n",
		".gitignore":      "*.log\n",
		"dir with space/": "",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			_ = os.MkdirAll(p, 0o755)
			continue
		}
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(body), 0o644)
	}
}

func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		t := filepath.Join(dst, rel)
		switch {
		case fi.IsDir():
			return os.MkdirAll(t, fi.Mode().Perm()|0o700)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(t, b, fi.Mode().Perm())
		}
		return nil
	})
}

// reset makes the sandbox as it was before any line ran.
func reset(gitTemplate string) error {
	for _, dir := range []string{Sandbox, "/tmp"} {
		_ = os.Chmod(dir, 0o755)
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			_ = filepath.Walk(p, func(q string, fi os.FileInfo, err error) error {
				if err == nil && fi.IsDir() {
					_ = os.Chmod(q, 0o755)
				}
				return nil
			})
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
	}
	for _, f := range []string{StubLog, TraceLog, ErrLog} {
		if err := os.RemoveAll(f); err != nil {
			return err
		}
	}
	for _, d := range []string{Proj, Home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(gitTemplate, ".git")); err == nil {
		if err := copyTree(gitTemplate, Proj); err != nil {
			return err
		}
	} else {
		writeFixtures(Proj)
	}
	_ = os.WriteFile(filepath.Join(Home, ".bashrc"), []byte("# bashrc\n"), 0o644)
	return nil
}

// reap waits for every child of PID 1 until there is none.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}

func run(req Request, gitTemplate string) (resp Response) {
	t0 := time.Now()
	if err := reset(gitTemplate); err != nil {
		return Response{Err: "reset: " + err.Error()}
	}
	resp.ResetUS = time.Since(t0).Microseconds()
	trace, err := os.OpenFile(TraceLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
	if err != nil {
		return Response{Err: err.Error()}
	}
	defer trace.Close()
	stderr, err := os.OpenFile(ErrLog, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return Response{Err: err.Error()}
	}
	defer stderr.Close()
	null, err := os.OpenFile("/dev/null", os.O_RDWR, 0)
	if err != nil {
		return Response{Err: err.Error()}
	}
	defer null.Close()
	cmd := &exec.Cmd{
		Path: RealBash,
		Args: []string{"bash", "-x", "-c", string(req.Line)},
		Env: []string{
			"PATH=" + Stubs, "HOME=" + Home, "PWD=" + Proj,
			"BASH_XTRACEFD=" + strconv.Itoa(TraceFD),
		},
		Dir:         Proj,
		Stdin:       null,
		Stdout:      null,
		Stderr:      stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	cmd.ExtraFiles = make([]*os.File, TraceFD-2)
	cmd.ExtraFiles[TraceFD-3] = trace
	if err := cmd.Start(); err != nil {
		return Response{Err: "start: " + err.Error()}
	}
	// At the deadline, PID 1 kills every other process of the namespace.
	var timedOut atomic.Bool
	timer := time.AfterFunc(time.Duration(req.TimeoutMS)*time.Millisecond, func() {
		timedOut.Store(true)
		_ = syscall.Kill(-1, syscall.SIGKILL)
	})
	t1 := time.Now()
	werr := cmd.Wait()
	resp.RunUS = time.Since(t1).Microseconds()
	t2 := time.Now()
	// Whatever the line left running (background jobs, process
	// substitutions, coprocs, setsid) has been reparented to PID 1: wait
	// for it to end on its own, until the deadline, so that what it runs
	// is seen every time.
	reap()
	timer.Stop()
	resp.TimedOut = timedOut.Load()
	_ = syscall.Kill(-1, syscall.SIGKILL)
	reap()
	resp.ReapUS = time.Since(t2).Microseconds()
	resp.Exit = cmd.ProcessState.ExitCode()
	if werr != nil && resp.Exit == -1 {
		resp.Exit = 128 + int(syscall.SIGKILL)
	}
	resp.Trace, _ = os.ReadFile(TraceLog)
	resp.Stubs, _ = os.ReadFile(StubLog)
	se, _ := os.ReadFile(ErrLog)
	if len(se) > 2000 {
		se = se[len(se)-2000:]
	}
	resp.Stderr = se
	if _, err := os.Lstat(Canary); err == nil {
		resp.Canary = true
	}
	return resp
}

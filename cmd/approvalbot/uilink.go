package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"golang.org/x/term"
	"rsc.io/qr"

	"approvalbot/config"
	"approvalbot/gate"
	"approvalbot/web"
)

// webUI builds the approval page mounted at /ui/ on serve's listener and,
// on a terminal, prints a one-time sign-in link and its QR code when
// there is one approver to make it for: the approver.token setup, or a
// single APPROVALBOT_ADMIN_TOKENS name. Otherwise (several approvers, or
// a log that an agent might read) `approvalbot ui-link` makes one.
func webUI(e *env, s config.Settings, g *gate.Gate, admins map[string]string, addr net.Addr, logger *slog.Logger) http.Handler {
	h := web.New(web.Config{Approvers: admins, PublicURL: s.PublicURL}, g, logger)
	names := map[string]bool{}
	for _, n := range admins {
		names[n] = true
	}
	if len(names) != 1 || !isTerminal(e.stderr) {
		// A log may be read by an agent (nohup.out in the project): a live
		// link there would be an approver's session for it.
		fmt.Fprintf(e.stderr, "Web page: %s — sign in with your approver token, or make a one-time link with `approvalbot ui-link`\n", pageURL(s, addr))
		return h
	}
	var name string
	for n := range names {
		name = n
	}
	link, err := h.NewLink(name, baseURL(s, addr))
	if err != nil {
		logger.Error("web: make the sign-in link", "err", err)
		return h
	}
	printLink(e.stderr, link, isTerminal(e.stderr))
	return h
}

// baseURL is where the daemon is reached: APPROVALBOT_PUBLIC_URL, else the
// listener's own address (a wildcard listen address names this host).
func baseURL(s config.Settings, addr net.Addr) string {
	if s.PublicURL != "" {
		return strings.TrimRight(s.PublicURL, "/")
	}
	scheme := "http"
	if s.TLSCert != "" {
		scheme = "https"
	}
	host := addr.String()
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = net.JoinHostPort(h, fmt.Sprint(ta.Port))
		}
	}
	return scheme + "://" + host
}

func pageURL(s config.Settings, addr net.Addr) string { return baseURL(s, addr) + web.Prefix }

// printLink prints a sign-in link, with its QR code when qrCode is set.
func printLink(w io.Writer, l web.LinkBody, qrCode bool) {
	fmt.Fprintf(w, "Web page: open this one-time sign-in link (works once, until %s, as %s):\n  %s\n",
		l.Expires.Local().Format("15:04:05"), l.Approver, l.URL)
	if u, err := url.Parse(l.URL); err == nil && isLoopbackName(u.Hostname()) {
		fmt.Fprintln(w, "  (a loopback address: only this machine can open it; set APPROVALBOT_PUBLIC_URL to an address your phone reaches)")
	}
	if qrCode {
		if err := writeQR(w, l.URL); err != nil {
			fmt.Fprintf(w, "  (no QR code: %v)\n", err)
		}
	}
}

func isLoopbackName(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// qrQuiet is the light border around the code, in modules. The standard
// asks for 4; phone cameras read 2 well, and a terminal has little room.
const qrQuiet = 2

// writeQR draws text as a QR code with half-block characters, two modules
// per character cell, in explicit colours (light modules white on black),
// so it scans on light and dark terminal themes alike.
func writeQR(w io.Writer, text string) error {
	c, err := qr.Encode(text, qr.L)
	if err != nil {
		return fmt.Errorf("encode QR code: %w", err)
	}
	const on, off = "\x1b[97;40m", "\x1b[0m"
	var b strings.Builder
	for y := -qrQuiet; y < c.Size+qrQuiet; y += 2 {
		b.WriteString("  " + on)
		for x := -qrQuiet; x < c.Size+qrQuiet; x++ {
			top, bottom := !c.Black(x, y), !c.Black(x, y+1) && y+1 < c.Size+qrQuiet
			switch {
			case top && bottom:
				b.WriteString("█")
			case top:
				b.WriteString("▀")
			case bottom:
				b.WriteString("▄")
			default:
				b.WriteString(" ")
			}
		}
		b.WriteString(off + "\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// runUILink is `approvalbot ui-link [--qr|--no-qr] [--json]`: asks the
// daemon for a one-time sign-in link to the web page, for the approver
// whose token this runs with (APPROVALBOT_TOKEN, else the approver token in
// the data dir, as approve and deny find it).
func runUILink(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "ui-link", "ui-link [--qr|--no-qr] [--json]")
	forceQR := fs.Bool("qr", false, "print the QR code even when stdout is not a terminal")
	noQR := fs.Bool("no-qr", false, "never print the QR code")
	asJSON := fs.Bool("json", false, "print {\"url\",\"approver\",\"expires_at\"}")
	if _, code, ok := parseFlags(e, fs, args, 0); !ok {
		return code
	}
	base := strings.TrimRight(daemonURL(e), "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/ui/api/links", nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot ui-link: bad APPROVALBOT_URL %q: %v\n", base, err)
		return exitUsage
	}
	if tok := approverToken(e); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := (&http.Client{Timeout: clientTimeout}).Do(req)
	if err != nil {
		fmt.Fprintf(e.stderr, "approvalbot ui-link: cannot reach the daemon at %s: is `approvalbot serve` running there? (set APPROVALBOT_URL)\n  %v\n", base, err)
		return exitFailure
	}
	defer resp.Body.Close()
	var body struct {
		web.LinkBody
		Error string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
			fmt.Fprintf(e.stderr, "approvalbot ui-link: the daemon at %s needs the approver credential: set APPROVALBOT_TOKEN to an admin token, "+
				"or run this as the daemon's user on its machine with the same APPROVALBOT_DATA_DIR (it reads DATA_DIR/%s)\n", base, config.ApproverTokenFile)
		case resp.StatusCode == http.StatusNotFound:
			fmt.Fprintf(e.stderr, "approvalbot ui-link: the daemon at %s has no web page: is it an older version?\n", base)
		default:
			fmt.Fprintf(e.stderr, "approvalbot ui-link: %s: %s\n", resp.Status, body.Error)
		}
		return exitFailure
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		_ = enc.Encode(body.LinkBody)
		return exitOK
	}
	printLink(e.stdout, body.LinkBody, !*noQR && (*forceQR || isTerminal(e.stdout)))
	return exitOK
}

// approverToken is the token approve and deny send: APPROVALBOT_TOKEN, else
// the approver token in the data dir.
func approverToken(e *env) string {
	if tok := e.getenv("APPROVALBOT_TOKEN"); tok != "" {
		return tok
	}
	if dir, err := config.DataDir(e.getenv); err == nil {
		tok, _ := config.ReadApproverToken(dir, false)
		return tok
	}
	return ""
}

package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"rsc.io/qr"

	"approvalbot/web"
)

// TestQRRoundTrip reads the terminal QR code back into modules and
// compares them with the encoder's, quiet zone included.
func TestQRRoundTrip(t *testing.T) {
	const text = "http://192.168.1.20:8754/ui/#link=bK6xeIrlgokKHBh7qwi730mFA6A"
	var b bytes.Buffer
	if err := writeQR(&b, text); err != nil {
		t.Fatal(err)
	}
	c, err := qr.Encode(text, qr.L)
	if err != nil {
		t.Fatal(err)
	}
	ansi := regexp.MustCompile("\x1b\\[[0-9;]*m")
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	size := c.Size + 2*qrQuiet
	if want := (size + 1) / 2; len(lines) != want {
		t.Fatalf("%d lines, want %d", len(lines), want)
	}
	for row, line := range lines {
		cells := []rune(strings.TrimPrefix(ansi.ReplaceAllString(line, ""), "  "))
		if len(cells) != size {
			t.Fatalf("line %d has %d cells, want %d", row, len(cells), size)
		}
		for i, r := range cells {
			x, y := i-qrQuiet, 2*row-qrQuiet
			top := r == '█' || r == '▀'
			bottom := r == '█' || r == '▄'
			if top != !c.Black(x, y) {
				t.Fatalf("module (%d,%d): light=%v, encoder says black=%v", x, y, top, c.Black(x, y))
			}
			if y+1 < c.Size+qrQuiet && bottom != !c.Black(x, y+1) {
				t.Fatalf("module (%d,%d): light=%v, encoder says black=%v", x, y+1, bottom, c.Black(x, y+1))
			}
		}
	}
}

// TestServeAndUILinkSignIn: serve with its log in a file prints no live
// sign-in link there (an agent may read a log), only how to make one;
// `approvalbot ui-link` makes one, which signs in once.
func TestServeAndUILinkSignIn(t *testing.T) {
	dataDir := t.TempDir()
	addr := freeAddr(t)
	logPath := filepath.Join(t.TempDir(), "serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(binary(t), "serve")
	cmd.Env = append(os.Environ(), "APPROVALBOT_DATA_DIR="+dataDir, "APPROVALBOT_LISTEN="+addr,
		"APPROVALBOT_PUBLIC_URL=", "APPROVALBOT_ADMIN_TOKENS=", "APPROVALBOT_API_TOKENS=", "APPROVALBOT_TELEGRAM_TOKEN=", "APPROVALBOT_SLACK_BOT_TOKEN=")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	d := struct{ url string }{"http://" + addr}
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(logPath)
		if strings.Contains(string(b), "approvalbot ui-link") {
			if strings.Contains(string(b), "#link=") {
				t.Fatalf("serve printed a live sign-in link into its log:\n%s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not say how to sign in:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	redeem := func(code string) int {
		req, _ := http.NewRequest("POST", d.url+"/ui/api/redeem", strings.NewReader(`{"code":"`+code+`"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	var out, errb bytes.Buffer
	vars := map[string]string{"APPROVALBOT_DATA_DIR": dataDir, "APPROVALBOT_URL": d.url}
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	if code := dispatch(context.Background(), e, []string{"ui-link", "--json"}); code != exitOK {
		t.Fatalf("ui-link: exit %d: %s", code, errb.String())
	}
	var l web.LinkBody
	if err := json.Unmarshal(out.Bytes(), &l); err != nil {
		t.Fatalf("ui-link --json: %v: %s", err, out.String())
	}
	if l.Approver != "local-approver" || !strings.HasPrefix(l.URL, d.url+"/ui/#link=") {
		t.Fatalf("ui-link: %+v", l)
	}
	code := l.URL[strings.Index(l.URL, "#link=")+len("#link="):]
	if st := redeem(code); st != 200 {
		t.Fatalf("ui-link's link: %d", st)
	}
	if st := redeem(code); st != http.StatusUnauthorized {
		t.Fatalf("ui-link's link used twice: %d, want 401", st)
	}

	// Without the approver credential, no link.
	out.Reset()
	errb.Reset()
	vars["APPROVALBOT_DATA_DIR"] = t.TempDir()
	if code := dispatch(context.Background(), e, []string{"ui-link"}); code != exitFailure || !strings.Contains(errb.String(), "approver credential") {
		t.Fatalf("ui-link without a token: exit %d: %s", code, errb.String())
	}
}

// TestServeTLS: with APPROVALBOT_TLS_CERT and _KEY the listener speaks
// https, the sign-in link says https, and the session cookie is Secure.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeSelfSigned(t, certPath, keyPath)
	addr := freeAddr(t)
	logPath := filepath.Join(dir, "serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(binary(t), "serve")
	cmd.Env = append(os.Environ(), "APPROVALBOT_DATA_DIR="+filepath.Join(dir, "data"), "APPROVALBOT_LISTEN="+addr,
		"APPROVALBOT_TLS_CERT="+certPath, "APPROVALBOT_TLS_KEY="+keyPath,
		"APPROVALBOT_PUBLIC_URL=", "APPROVALBOT_ADMIN_TOKENS=", "APPROVALBOT_API_TOKENS=", "APPROVALBOT_TELEGRAM_TOKEN=", "APPROVALBOT_SLACK_BOT_TOKEN=")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // the test's own self-signed cert
	// A link made by the approver (as `approvalbot ui-link` does) says https.
	var l web.LinkBody
	deadline := time.Now().Add(20 * time.Second)
	for {
		tok, _ := os.ReadFile(filepath.Join(dir, "data", "approver.token"))
		req, _ := http.NewRequest("POST", "https://"+addr+"/ui/api/links", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
		req.Header.Set("Content-Type", "application/json")
		if resp, err := c.Do(req); err == nil {
			err = json.NewDecoder(resp.Body).Decode(&l)
			resp.Body.Close()
			if resp.StatusCode == 200 && err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("no sign-in link over https:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := regexp.MustCompile(`^https://\S+/ui/#link=([A-Za-z0-9_-]+)$`).FindStringSubmatch(l.URL)
	if m == nil {
		t.Fatalf("link %q, want https", l.URL)
	}
	req, _ := http.NewRequest("POST", "https://"+addr+"/ui/api/redeem", strings.NewReader(`{"code":"`+m[1]+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("https: %v", err)
	}
	resp.Body.Close()
	if set := resp.Header.Get("Set-Cookie"); resp.StatusCode != 200 || !strings.HasPrefix(set, "__Host-") || !strings.Contains(set, "Secure") {
		t.Fatalf("redeem over https: %d, Set-Cookie %q", resp.StatusCode, set)
	}
	// Plain http to a TLS listener gets net/http's 400, never the API.
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain http answered on a TLS listener")
		}
	}
}

// writeSelfSigned writes a certificate for 127.0.0.1 and its key.
func writeSelfSigned(t *testing.T, certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "approvalbot test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
}

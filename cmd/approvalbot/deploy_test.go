package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"approvalbot/config"
)

// There is no Docker engine here, so the compose file is checked by parsing
// it, and the image recipe by building the binary the way the Dockerfile does.

// settingNames returns every APPROVALBOT_* variable config.Settings reads.
func settingNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{"APPROVALBOT_URL": true, "APPROVALBOT_TOKEN": true}
	st := reflect.TypeOf(config.Settings{})
	for i := range st.NumField() {
		tag := st.Field(i).Tag.Get("envconfig")
		if tag == "" {
			t.Fatalf("field %s has no envconfig tag", st.Field(i).Name)
		}
		names[config.Prefix+"_"+tag] = true
	}
	return names
}

func TestComposeFile(t *testing.T) {
	raw, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Build       any               `yaml:"build"`
			Image       string            `yaml:"image"`
			Command     []string          `yaml:"command"`
			EnvFile     any               `yaml:"env_file"`
			Environment map[string]string `yaml:"environment"`
			Ports       []string          `yaml:"ports"`
			Volumes     []string          `yaml:"volumes"`
			Restart     string            `yaml:"restart"`
			Healthcheck struct {
				Test        []string `yaml:"test"`
				Interval    string   `yaml:"interval"`
				Timeout     string   `yaml:"timeout"`
				Retries     int      `yaml:"retries"`
				StartPeriod string   `yaml:"start_period"`
			} `yaml:"healthcheck"`
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("parse docker-compose.yml: %v", err)
	}
	svc, ok := doc.Services["approvalbot"]
	if !ok {
		t.Fatal("no approvalbot service")
	}
	if !reflect.DeepEqual(svc.Command, []string{"serve"}) {
		t.Errorf("command = %v, want [serve]", svc.Command)
	}
	if svc.EnvFile != ".env" {
		t.Errorf("env_file = %v, want .env", svc.EnvFile)
	}
	if svc.Restart != "unless-stopped" && svc.Restart != "always" {
		t.Errorf("restart = %q", svc.Restart)
	}
	names := settingNames(t)
	for k := range svc.Environment {
		if !names[k] {
			t.Errorf("environment sets %s, which config does not read", k)
		}
	}
	if svc.Environment["APPROVALBOT_DATA_DIR"] != "/data" {
		t.Errorf("data dir = %q, want /data", svc.Environment["APPROVALBOT_DATA_DIR"])
	}
	// The data dir is on a named volume declared at top level.
	found := false
	for _, v := range svc.Volumes {
		if src, dst, _ := strings.Cut(v, ":"); dst == "/data" {
			if _, ok := doc.Volumes[src]; !ok {
				t.Errorf("volume %s is not a named volume", src)
			}
			found = true
		}
	}
	if !found {
		t.Error("no volume mounted at /data")
	}
	if len(svc.Healthcheck.Test) < 2 || svc.Healthcheck.Test[0] != "CMD" || !strings.Contains(strings.Join(svc.Healthcheck.Test, " "), "doctor --health") {
		t.Errorf("healthcheck = %v", svc.Healthcheck.Test)
	}
	for _, p := range svc.Ports {
		if !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("port %s is published beyond loopback", p)
		}
	}
}

// TestEnvExample: every variable in .env.example is a real setting, each is
// preceded by a comment, and the required ones for a non-loopback listener
// are there.
func TestEnvExample(t *testing.T) {
	f, err := os.Open("../../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := settingNames(t)
	seen := map[string]bool{}
	prevComment := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			prevComment = false
		case strings.HasPrefix(line, "#"):
			prevComment = true
		default:
			k, _, ok := strings.Cut(line, "=")
			if !ok || !names[k] {
				t.Errorf(".env.example:%d: %q is not a setting config reads", n, k)
			}
			if !prevComment {
				t.Errorf(".env.example:%d: %s has no comment above it", n, k)
			}
			seen[k] = true
		}
	}
	for _, k := range []string{"APPROVALBOT_API_TOKENS", "APPROVALBOT_ADMIN_TOKENS", "APPROVALBOT_TELEGRAM_TOKEN", "APPROVALBOT_SLACK_BOT_TOKEN"} {
		if !seen[k] {
			t.Errorf(".env.example lacks %s", k)
		}
	}
}

// TestDockerBuildRecipe builds the binary as the Dockerfile does (static,
// CGO_ENABLED=0) and checks the Dockerfile still says so.
func TestDockerBuildRecipe(t *testing.T) {
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CGO_ENABLED=0", "USER 65532", "VOLUME [\"/data\"]", "./cmd/approvalbot", "AS build"} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	out := filepath.Join(t.TempDir(), "approvalbot")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=test", "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, b)
	}
	v, err := exec.Command(out, "version").Output()
	if err != nil || !strings.Contains(string(v), "approvalbot test") {
		t.Errorf("version = %q, %v", v, err)
	}
	// A static binary has no program interpreter.
	if b, err := os.ReadFile(out); err == nil && strings.Contains(string(b[:min(len(b), 4096)]), "ld-linux") {
		t.Error("binary is dynamically linked")
	}
}

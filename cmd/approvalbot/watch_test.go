package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"approvalbot/api"
	"approvalbot/gate"
)

func watchEnv(stdin any, vars map[string]string) (*env, *bytes.Buffer) {
	var errb bytes.Buffer
	e := &env{stdout: &bytes.Buffer{}, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	switch in := stdin.(type) {
	case *os.File:
		e.stdin, e.stdout = in, in
	default:
		e.stdin = strings.NewReader("")
	}
	return e, &errb
}

func TestRunWatchArgs(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for _, tt := range []struct {
		name  string
		stdin any
		args  []string
		code  int
		msg   string
	}{
		{"help", nil, []string{"--help"}, exitOK, "usage: approvalbot watch"},
		{"unknown flag", nil, []string{"--nope"}, exitUsage, "flag provided but not defined"},
		{"extra argument", nil, []string{"now"}, exitUsage, "unexpected arguments"},
		{"guard out of range", nil, []string{"--guard", "1m"}, exitUsage, "--guard"},
		{"not a file", nil, nil, exitFailure, "needs a terminal"},
		{"a file that is not a terminal", devNull, nil, exitFailure, "needs a terminal"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, errb := watchEnv(tt.stdin, nil)
			if code := runWatch(context.Background(), e, tt.args); code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, errb)
			}
			if !strings.Contains(errb.String(), tt.msg) {
				t.Fatalf("stderr %q does not say %q", errb, tt.msg)
			}
		})
	}
}

func TestDefaultDecider(t *testing.T) {
	for _, tt := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"USER": "ana", "LOGNAME": "x"}, "ana (terminal)"},
		{map[string]string{"LOGNAME": "bob"}, "bob (terminal)"},
		{nil, "terminal"},
	} {
		e, _ := watchEnv(nil, tt.vars)
		if got := defaultDecider(e); got != tt.want {
			t.Errorf("defaultDecider(%v) = %q, want %q", tt.vars, got, tt.want)
		}
	}
}

// TestWithFinal: a refused decision carries the approval as it is, so the
// box can say who decided first; other errors pass through unchanged.
func TestWithFinal(t *testing.T) {
	decided := &gate.Approval{ID: "a1", Status: gate.StatusDenied, DecidedBy: "@ana"}
	conflict := &api.Error{Status: 409, Code: "already_decided", Message: "already decided", Approval: decided}
	a, err := withFinal(nil, conflict)
	if a != decided || !errors.Is(err, gate.ErrAlreadyDecided) {
		t.Fatalf("got %v, %v", a, err)
	}
	pending := &api.Error{Status: 409, Approval: &gate.Approval{ID: "a1", Status: gate.StatusPending}}
	if a, _ := withFinal(nil, pending); a != nil {
		t.Fatalf("a pending approval was passed as final: %+v", a)
	}
	other := errors.New("connection refused")
	if a, err := withFinal(nil, other); a != nil || err != other {
		t.Fatalf("got %v, %v", a, err)
	}
}

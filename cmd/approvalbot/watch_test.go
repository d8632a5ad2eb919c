package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
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

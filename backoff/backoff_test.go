package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	p := Policy{Min: time.Second, Max: 5 * time.Second}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i, w := range want {
		if got := p.Delay(i); got != w {
			t.Errorf("Delay(%d) = %s, want %s", i, got, w)
		}
	}
	if got := (Policy{Min: time.Second}).Delay(3); got != 8*time.Second {
		t.Errorf("uncapped Delay(3) = %s", got)
	}
	if got := (Policy{Min: time.Hour, Max: time.Minute}).Delay(0); got != time.Minute {
		t.Errorf("Min above Max: %s", got)
	}
	if got := (Policy{Min: time.Hour, Max: 1 << 62}).Delay(100); got != 1<<62 {
		t.Errorf("overflow: %s", got)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on an ended context = %v", err)
	}
	if err := Sleep(context.Background(), 0); err != nil {
		t.Errorf("Sleep(0) = %v", err)
	}
}

func TestRetry(t *testing.T) {
	errBusy, errBad := errors.New("busy"), errors.New("bad")
	calls, heard := 0, 0
	err := Retry(context.Background(), Policy{}, func(context.Context) error {
		if calls++; calls < 3 {
			return errBusy
		}
		return nil
	}, nil, func(error, time.Duration) { heard++ })
	if err != nil || calls != 3 || heard != 2 {
		t.Errorf("Retry = %v after %d calls, %d failures heard", err, calls, heard)
	}
	calls = 0
	err = Retry(context.Background(), Policy{}, func(context.Context) error { calls++; return errBad },
		func(err error) bool { return errors.Is(err, errBad) }, nil)
	if !errors.Is(err, errBad) || calls != 1 {
		t.Errorf("a permanent error: %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	err = Retry(ctx, Policy{Min: time.Hour}, func(context.Context) error { calls++; cancel(); return errBusy }, nil, nil)
	if !errors.Is(err, errBusy) || calls != 1 {
		t.Errorf("an ended context: %v after %d calls", err, calls)
	}
}

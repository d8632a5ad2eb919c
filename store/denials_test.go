package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"approvalbot/gate"
)

func TestDenials(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	d := gate.Denial{Key: "claude|Bash|abc", Reason: "not now", By: "ana", ApprovalID: "a1", Until: t0.Add(5 * time.Minute)}
	if err := s.RememberDenial(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := s.RememberDenial(ctx, gate.Denial{}); !errors.Is(err, gate.ErrInvalid) {
		t.Errorf("RememberDenial without key: %v, want ErrInvalid", err)
	}
	s = reopen(t, s)
	tests := []struct {
		name string
		key  string
		now  time.Time
		want *gate.Denial
	}{
		{"valid", d.Key, t0, &d},
		{"just before expiry", d.Key, d.Until.Add(-time.Nanosecond), &d},
		{"at expiry", d.Key, d.Until, nil},
		{"after expiry", d.Key, d.Until.Add(time.Hour), nil},
		{"other key", "claude|Bash|xyz", t0, nil},
		{"empty key", "", t0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.RecentDenial(ctx, tt.key, tt.now)
			if tt.want == nil {
				if !errors.Is(err, gate.ErrNotFound) {
					t.Fatalf("RecentDenial = %+v, %v; want ErrNotFound", got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, *tt.want) {
				t.Fatalf("RecentDenial = %+v, %v; want %+v", got, err, *tt.want)
			}
		})
	}

	// A newer denial of the same call replaces the old one.
	d2 := d
	d2.Reason, d2.Until = "still no", t0.Add(time.Hour)
	if err := s.RememberDenial(ctx, d2); err != nil {
		t.Fatal(err)
	}
	if got, err := s.RecentDenial(ctx, d.Key, d.Until.Add(time.Minute)); err != nil || got.Reason != "still no" {
		t.Fatalf("after replace: %+v, %v", got, err)
	}
}

func TestPruneDenials(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	for i, until := range []time.Duration{-time.Minute, 0, time.Minute, -time.Hour, time.Hour} {
		key := string(rune('a' + i))
		if err := s.RememberDenial(ctx, gate.Denial{Key: key, Until: t0.Add(until)}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.PruneDenials(ctx, t0)
	if err != nil || n != 3 {
		t.Fatalf("PruneDenials = %d, %v; want 3", n, err)
	}
	s = reopen(t, s)
	for key, alive := range map[string]bool{"a": false, "b": false, "c": true, "d": false, "e": true} {
		// Ask at a time before every expiry: only what was pruned is gone.
		_, err := s.RecentDenial(ctx, key, t0.Add(-2*time.Hour))
		if alive != (err == nil) {
			t.Errorf("denial %s: err %v, want alive=%v", key, err, alive)
		}
	}
	if n, err := s.PruneDenials(ctx, t0); err != nil || n != 0 {
		t.Errorf("second PruneDenials = %d, %v; want 0", n, err)
	}
}

package store

import (
	"context"
	"errors"
	"testing"

	"approvalbot/gate"
)

func TestValues(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	steps := []struct {
		key, value string
		wantErr    error
		want       string // after the put and a reopen; "" means not found
	}{
		{"telegram.chat_id", "-100123", nil, "-100123"},
		{"telegram.offset", "17", nil, "17"},
		{"telegram.offset", "18", nil, "18"},
		{"telegram.chat_id", "", nil, ""},
		{"", "x", gate.ErrInvalid, ""},
		{"unicode ключ", "значение\x00binary", nil, "значение\x00binary"},
	}
	for _, st := range steps {
		err := s.PutValue(ctx, st.key, st.value)
		if !errors.Is(err, st.wantErr) || (st.wantErr == nil) != (err == nil) {
			t.Fatalf("PutValue(%q): %v, want %v", st.key, err, st.wantErr)
		}
		s = reopen(t, s)
		got, err := s.GetValue(ctx, st.key)
		if st.want == "" {
			if !errors.Is(err, gate.ErrNotFound) {
				t.Fatalf("GetValue(%q) = %q, %v; want ErrNotFound", st.key, got, err)
			}
			continue
		}
		if err != nil || got != st.want {
			t.Fatalf("GetValue(%q) = %q, %v; want %q", st.key, got, err, st.want)
		}
	}
	if got, err := s.GetValue(ctx, "telegram.offset"); err != nil || got != "18" {
		t.Errorf("GetValue(telegram.offset) = %q, %v; want 18", got, err)
	}
}

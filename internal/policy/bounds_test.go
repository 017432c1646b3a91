package policy

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
)

func TestInputBounds(t *testing.T) {
	t.Parallel()
	b := InputBounds{
		Max:     map[string]string{"amount": "500.00"},
		Allowed: map[string][]string{"to_account": {"Checking", "Savings"}},
		Pattern: map[string]string{"member_id": "[0-9]{5}"},
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	ok := map[string]any{"amount": "250.00", "to_account": "Checking", "member_id": "12345"}
	tests := []struct {
		name    string
		change  map[string]any
		wantErr string // "" for allowed
	}{
		{"inside", nil, ""},
		{"at the ceiling", map[string]any{"amount": "500"}, ""},
		{"a number", map[string]any{"amount": 499.99}, ""},
		{"above the ceiling", map[string]any{"amount": "900.00"}, `input amount is outside the approval: "900.00" is above the ceiling 500.00`},
		{"a cent above", map[string]any{"amount": "500.01"}, "above the ceiling"},
		{"not a number", map[string]any{"amount": "1e9"}, "above the ceiling"},
		{"missing", map[string]any{"amount": nil}, "input amount is outside"},
		{"not allowed", map[string]any{"to_account": "External"}, `"External" is not one of the 2 allowed values`},
		{"pattern is whole", map[string]any{"member_id": "123456"}, "does not match the approved pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := map[string]any{}
			for k, v := range ok {
				in[k] = v
			}
			for k, v := range tt.change {
				if v == nil {
					delete(in, k)
					continue
				}
				in[k] = v
			}
			err := b.Check(in, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Check = %v, want allowed", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check = %v, want an error containing %q", err, tt.wantErr)
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != domain.CodeApprovalRequired {
				t.Errorf("code of %v is not APPROVAL_REQUIRED", err)
			}
		})
	}
}

func TestInputBoundsNeverQuoteSensitive(t *testing.T) {
	t.Parallel()
	b := InputBounds{Exact: map[string]string{"pin": "1111"}, Max: map[string]string{"amount": "5"}}
	err := b.Check(map[string]any{"pin": "9876", "amount": "1"}, map[string]bool{"pin": true})
	if err == nil || strings.Contains(err.Error(), "9876") || strings.Contains(err.Error(), "1111") {
		t.Fatalf("Check = %v, want a refusal quoting neither value", err)
	}
}

func TestInputBoundsOneOff(t *testing.T) {
	t.Parallel()
	b := InputBounds{Exact: map[string]string{"amount": "250.00", "member_id": "12345"}}
	if err := b.Check(map[string]any{"amount": "250.00", "member_id": "12345"}, nil); err != nil {
		t.Fatalf("exact inputs refused: %v", err)
	}
	if err := b.Check(map[string]any{"amount": "250.01", "member_id": "12345"}, nil); err == nil {
		t.Fatal("a one-off approval covered another amount")
	}
}

func TestInputBoundsValidate(t *testing.T) {
	t.Parallel()
	for name, b := range map[string]InputBounds{
		"max.amount":   {Max: map[string]string{"amount": "lots"}},
		"pattern.id":   {Pattern: map[string]string{"id": "("}},
		"allowed.acct": {Allowed: map[string][]string{"acct": {}}},
	} {
		if err := b.Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Validate(%s) = %v, want an error naming %s", name, err, name)
		}
	}
}

func TestCheckExpiry(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	if err := CheckExpiry("", now); err != nil {
		t.Errorf("no expiry refused: %v", err)
	}
	if err := CheckExpiry("2026-12-03T00:00:00Z", now); err != nil {
		t.Errorf("a future expiry refused: %v", err)
	}
	if err := CheckExpiry("2026-12-02T12:00:00Z", now); err == nil {
		t.Error("an approval expiring now was accepted")
	}
	if err := CheckExpiry("tomorrow", now); err == nil {
		t.Error("an unreadable expiry was accepted")
	}
}

func TestParseGrant(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Grant{"Submit transfer:2": {Match: "Submit transfer", Uses: 2}, "a:b:0": {Match: "a:b", Uses: 0}} {
		if got, err := ParseGrant(in); err != nil || got != want {
			t.Errorf("ParseGrant(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"Submit", ":2", "Submit:x", "Submit:-1", ""} {
		if _, err := ParseGrant(in); err == nil || !strings.Contains(err.Error(), "MATCH:N") {
			t.Errorf("ParseGrant(%q) = %v, want an error naming MATCH:N", in, err)
		}
	}
}

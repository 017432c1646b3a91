package state_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface/state"
)

// TestRedirectIsNeverFollowed: a contract server that answers 307 (which
// keeps method and body) to another port on 127.0.0.1; the other port must
// never see a request, let alone the typed secret.
func TestRedirectIsNeverFollowed(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-canary-secret"
	var elsewhere, bodies atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		if b, _ := io.ReadAll(r.Body); len(b) > 0 {
			bodies.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"url":"http://x/","title":"Other","controls":[],"seq":1}`)
	}))
	t.Cleanup(other.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)

	s, err := state.New(redirect.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	pol, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // only a hang meets it
	defer cancel()

	pin := &domain.Node{Role: "textbox", Name: "PIN", Ref: "c1.pin"}
	aa, err := pol.Authorize(policy.Request{Action: domain.Action{Type: domain.ActType, Actor: domain.ActorAutomation}, Node: pin, Text: secret})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Dispatch(ctx, aa)
	if !errors.Is(err, state.ErrOrigin) {
		t.Errorf("act answered by a 307: %v, want ErrOrigin", err)
	}
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("the error quotes the typed text: %v", err)
	}
	if _, err := s.Observe(ctx); !errors.Is(err, state.ErrOrigin) {
		t.Errorf("state answered by a 307: %v, want ErrOrigin", err)
	}
	if err := s.StartSession(ctx); !errors.Is(err, state.ErrOrigin) {
		t.Errorf("session answered by a 307: %v, want ErrOrigin", err)
	}
	if n, b := elsewhere.Load(), bodies.Load(); n != 0 || b != 0 {
		t.Errorf("the other origin saw %d requests and %d bodies, want 0", n, b)
	}
}

func TestAllowedOrigins(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		base    string
		origins []string
		wantErr string
	}{
		{"default is the base origin", "http://127.0.0.1:8811/app", nil, ""},
		{"base listed with its port", "http://127.0.0.1:8811", []string{"http://127.0.0.1:8811"}, ""},
		{"default port made explicit", "http://127.0.0.1/app", []string{"http://127.0.0.1:80/"}, ""},
		{"host case ignored", "http://LOCALHOST:9000", []string{"http://localhost:9000"}, ""},
		{"other port refused", "http://127.0.0.1:8811", []string{"http://127.0.0.1:8812"}, "not among the allowed origins"},
		{"other scheme refused", "https://127.0.0.1:8811", []string{"http://127.0.0.1:8811"}, "not among the allowed origins"},
		{"path in an origin", "http://127.0.0.1:8811", []string{"http://127.0.0.1:8811/app"}, `"http://127.0.0.1:8811/app"`},
		{"bare host", "http://127.0.0.1:8811", []string{"127.0.0.1"}, `"127.0.0.1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := state.New(tc.base, nil, state.WithAllowedOrigins(tc.origins...))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				_ = s.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New: %v, want an error containing %s", err, tc.wantErr)
			}
		})
	}
}

// TestCallerClientKeepsItsRedirectPolicy: New copies the caller's client,
// so the surface's refusal of redirects does not change it.
func TestCallerClientKeepsItsRedirectPolicy(t *testing.T) {
	t.Parallel()
	c := &http.Client{}
	if _, err := state.New("http://127.0.0.1:1", c); err != nil {
		t.Fatal(err)
	}
	if c.CheckRedirect != nil {
		t.Error("New changed the caller's client")
	}
}

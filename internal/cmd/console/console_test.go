package consolecmd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/console"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and its key as
// PEM files and returns their paths.
func writeCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "console"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestConsoleFlags checks flag parsing and validation apart from serving:
// a non-loopback address needs --allow-remote and a TLS pair, refused
// before anything opens with the flags named.
func TestConsoleFlags(t *testing.T) {
	t.Parallel()
	cert, key := writeCert(t)
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, o *consoleOptions)
	}{
		{name: "defaults", check: func(t *testing.T, o *consoleOptions) {
			if o.Park.Addr != "127.0.0.1:8812" || o.Park.AllowRemote || o.Park.tls != nil || o.Store.DataDir != ".cua" {
				t.Errorf("defaults: %+v %+v", o.Park, o.Store)
			}
		}},
		{name: "remote with allow-remote and TLS", args: []string{"--addr", "0.0.0.0:8812", "--allow-remote", "--tls-cert", cert, "--tls-key", key},
			check: func(t *testing.T, o *consoleOptions) {
				if o.Park.tls == nil {
					t.Error("the TLS pair was not read")
				}
			}},
		{name: "loopback with TLS", args: []string{"--tls-cert", cert, "--tls-key", key}},
		{name: "remote with allow-remote, no TLS", args: []string{"--addr", "0.0.0.0:8812", "--allow-remote"}, wantErr: "--tls-cert and --tls-key"},
		{name: "remote without allow-remote", args: []string{"--addr", "0.0.0.0:8812"}, wantErr: "--allow-remote"},
		{name: "certificate without key", args: []string{"--tls-cert", cert}, wantErr: "give both"},
		{name: "key for certificate", args: []string{"--tls-cert", key, "--tls-key", key}, wantErr: "--tls-cert " + key},
		{name: "missing certificate", args: []string{"--tls-cert", "/nonexistent.pem", "--tls-key", key}, wantErr: "--tls-cert: "},
		{name: "token file is gone", args: []string{"--token-file", cert}, wantErr: "unknown flag: --token-file"},
		{name: "address without port", args: []string{"--addr", "127.0.0.1"}, wantErr: "addr"},
		{name: "an argument", args: []string{"extra"}, wantErr: "no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, _, _ := cmdutil.TestFactory(nil)
			var got *consoleOptions
			cmd := NewCmdConsole(f, func(_ context.Context, o *consoleOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			err := cmd.ExecuteContext(t.Context())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || got != nil {
					t.Fatalf("err %v (ran: %v), want %q", err, got != nil, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

// TestConsoleServes starts the real command on a SQLite store and checks
// it prints its address (and no shared token) and serves the sign-in page.
func TestConsoleServes(t *testing.T) {
	t.Parallel()
	f, _, errOut := cmdutil.TestFactory(nil)
	o := &consoleOptions{IO: f.IO, Park: ParkFlags{Addr: "127.0.0.1:0"}, serveFor: 300 * time.Millisecond}
	o.Store.DataDir, o.Store.Getenv = t.TempDir(), func(string) string { return "" }
	if err := runConsole(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	if out := errOut.String(); !strings.Contains(out, "console: http://127.0.0.1:") || strings.Contains(out, "token ") {
		t.Fatalf("stderr = %q, want the URL and no token", out)
	}
}

// TestAuthenticator: the command's sign-in check over a real SQLite
// store's principals: a principal's token is that principal; garbage and
// a wrong secret are refused without "locked"; five wrong secrets lock the
// name, and the refusal of even the right token says until when.
func TestAuthenticator(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "cua.db"), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tok, err := principal.NewDirectory(db, nil).Add(t.Context(), principal.Principal{Name: "test@host"}, "alice", principal.Approver)
	if err != nil {
		t.Fatal(err)
	}
	auth := Authenticator(db)
	if who, err := auth.Authenticate(t.Context(), tok); err != nil || who != (console.Identity{Name: "alice", Role: "approver"}) {
		t.Fatalf("alice's token: %+v %v", who, err)
	}
	var locked *console.LockedError
	for _, bad := range []string{"garbage", "cuap_bob_" + strings.Repeat("0", 64)} {
		if _, err := auth.Authenticate(t.Context(), bad); err == nil || errors.As(err, &locked) {
			t.Errorf("token %q: %v, want a plain refusal", bad, err)
		}
	}
	for range 5 {
		_, _ = auth.Authenticate(t.Context(), "cuap_alice_"+strings.Repeat("0", 64))
	}
	_, err = auth.Authenticate(t.Context(), tok)
	if !errors.As(err, &locked) || !locked.Until.After(time.Now().Add(14*time.Minute)) {
		t.Fatalf("alice's right token after 5 wrong: %v, want locked for about 15 minutes", err)
	}
}

package servecmd

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/principal"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and localhost
// and its key to dir, returning their paths and the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cua serve test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

// TestServeBindRefused runs the real command: a non-loopback --addr
// without --allow-remote, or with it but without TLS, and broken TLS
// flags are refused as flag errors (exit 1) naming the flags, before the
// data dir (store, queue) is touched.
func TestServeBindRefused(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	certFile, keyFile, _ := selfSigned(t, tmp)
	garbage := filepath.Join(tmp, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"every interface", []string{"--addr", "0.0.0.0:0"}, []string{"--allow-remote", "not a loopback address"}},
		{"every interface, no host", []string{"--addr", ":0"}, []string{"--allow-remote"}},
		{"a LAN address", []string{"--addr", "192.0.2.1:8810"}, []string{"--allow-remote"}},
		{"a host name", []string{"--addr", "example.com:8810"}, []string{"--allow-remote"}},
		{"remote without TLS", []string{"--addr", "0.0.0.0:0", "--allow-remote"}, []string{"--tls-cert", "--tls-key", "only over TLS"}},
		{"remote with a cert and no key", []string{"--addr", "0.0.0.0:0", "--allow-remote", "--tls-cert", certFile}, []string{"--tls-cert", "--tls-key"}},
		{"a key and no cert", []string{"--tls-key", keyFile}, []string{"--tls-cert", "--tls-key"}},
		{"a missing cert", []string{"--tls-cert", filepath.Join(tmp, "nope.pem"), "--tls-key", keyFile}, []string{"--tls-cert"}},
		{"a cert that is not one", []string{"--tls-cert", garbage, "--tls-key", keyFile}, []string{"--tls-cert", "not a certificate"}},
		{"a key that is not the cert's", []string{"--tls-cert", certFile, "--tls-key", certFile}, []string{"--tls-key", "not a certificate and its key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := filepath.Join(t.TempDir(), "data")
			f, _, _ := cmdutil.TestFactory(nil)
			cmd := NewCmdServe(f, nil)
			cmd.SetArgs(append([]string{"--data-dir", data, "--workers", "0", "--token", "tok"}, tt.args...))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := cmd.ExecuteContext(ctx)
			var fe *cmdutil.FlagError
			if !errors.As(err, &fe) {
				t.Fatalf("err %v, want a flag error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q does not name %q", err, w)
				}
			}
			if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the data dir was touched before the refusal: %v", err)
			}
		})
	}
}

// TestServeHTTPS runs the real command on every interface with
// --allow-remote and a self-signed certificate: it serves HTTPS (a client
// trusting that certificate gets 401 without a token, 200 with a
// principal's token from the store serve opened) and plain HTTP gets no
// answer from it.
func TestServeHTTPS(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	certFile, keyFile, cert := selfSigned(t, tmp)
	data := filepath.Join(tmp, "data")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: pw}, Getenv: func(string) string { return "" }}
	cmd := NewCmdServe(f, nil)
	cmd.SetArgs([]string{"--addr", "0.0.0.0:0", "--allow-remote", "--tls-cert", certFile, "--tls-key", keyFile,
		"--data-dir", data, "--workers", "0", "--token", "tok"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx); pw.Close() }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	sc := bufio.NewScanner(pr)
	var port string
	for port == "" && sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "serving https://"); ok {
			hostport, _, _ := strings.Cut(rest, " ")
			_, port, _ = net.SplitHostPort(hostport)
		}
	}
	if port == "" {
		t.Fatalf("cua serve printed no https address: %v", sc.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()

	_, st, err := launch.Catalog(ctx, launch.StoreOptions{DataDir: data, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	alice, err := principal.NewDirectory(st, nil).Add(ctx, principal.Principal{Name: "root@test"}, "alice", principal.Operator)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(url, token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		_, err = io.Copy(io.Discard, res.Body)
		return res.StatusCode, res.Header.Get("WWW-Authenticate"), err
	}
	base := "https://127.0.0.1:" + port
	if code, auth, err := get(base+"/v1/runs", ""); err != nil || code != http.StatusUnauthorized || !strings.HasPrefix(auth, "Bearer") {
		t.Errorf("HTTPS without a token: %d %q %v, want 401 with WWW-Authenticate Bearer", code, auth, err)
	}
	if code, _, err := get(base+"/v1/runs", alice); err != nil || code != http.StatusOK {
		t.Errorf("HTTPS with alice's token: %d %v, want 200", code, err)
	}
	if code, _, err := get("http://127.0.0.1:"+port+"/v1/runs", "tok"); err == nil && code == http.StatusOK {
		t.Errorf("plain HTTP was served: %d", code)
	}
}

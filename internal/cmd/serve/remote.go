package servecmd

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/fsx"
)

// maxPEM bounds a certificate or key file.
const maxPEM = 1 << 20

// checkBind decides how --addr may be served, before anything opens: a
// loopback address as it is; any other only with --allow-remote and with
// --tls-cert and --tls-key, which are read and checked as a pair here.
func (o *ServeOptions) checkBind() error {
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return cmdutil.FlagErrorf("--tls-cert and --tls-key: pass both (a PEM certificate chain and its private key) or neither")
	}
	if !loopback(o.Addr) {
		switch {
		case !o.AllowRemote:
			return cmdutil.FlagErrorf("--addr %q is not a loopback address: cua serve binds 127.0.0.1, ::1 or localhost "+
				"unless --allow-remote is given (with --tls-cert and --tls-key)", o.Addr)
		case o.TLSCert == "":
			return cmdutil.FlagErrorf("--allow-remote: a non-loopback --addr (%s) is served only over TLS: pass --tls-cert FILE and --tls-key FILE", o.Addr)
		}
	}
	if o.TLSCert == "" {
		return nil
	}
	certPEM, err := fsx.ReadFile(o.TLSCert, maxPEM)
	if err != nil {
		return cmdutil.FlagErrorf("--tls-cert: %v", err)
	}
	keyPEM, err := fsx.ReadFile(o.TLSKey, maxPEM)
	if err != nil {
		return cmdutil.FlagErrorf("--tls-key: %v", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return cmdutil.FlagErrorf("--tls-cert %s, --tls-key %s: not a certificate and its key: %v", o.TLSCert, o.TLSKey, err)
	}
	o.cert = &cert
	return nil
}

// loopback reports whether addr's host is localhost or a loopback IP; an
// empty host (every interface) is not.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// listen binds --addr, serving TLS when a certificate was given; the
// scheme is what clients use.
func (o *ServeOptions) listen(ctx context.Context) (net.Listener, string, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", o.Addr)
	if err != nil || o.cert == nil {
		return ln, "http", err
	}
	return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*o.cert}, MinVersion: tls.VersionTLS12}), "https", nil
}

// certNames are the DNS names and IPs the certificate is for: the hosts
// the API answers besides its listening address.
func (o *ServeOptions) certNames() []string {
	if o.cert == nil || o.cert.Leaf == nil {
		return nil
	}
	names := append([]string(nil), o.cert.Leaf.DNSNames...)
	for _, ip := range o.cert.Leaf.IPAddresses {
		names = append(names, ip.String())
	}
	return names
}

// Package signkey holds the deployment's evidence signing key: an ed25519
// key (crypto/ed25519) that signs every finished bundle's manifest
// (DESIGN invariant 18). It creates the key file ([Init]: 0600 in a 0700
// directory under the data directory, never over an existing key unless
// forced), loads the key a run signs with ([Load]: the CUA_SIGNING_KEY
// environment variable taken at start by [TakeEnv], else the key file),
// and reads and writes the text forms of both halves:
//
//	cua-ed25519:<base64 of the 32-byte public key>          public
//	cua-ed25519-private:<base64 of the 32-byte seed>        private
//
// It imports nothing of the module but the bounded reader fsx, never prints a private key, and never
// names one in an error.
package signkey

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cuahq/cua/internal/fsx"
)

// Text prefixes of the two halves of a key.
const (
	PublicPrefix  = "cua-ed25519:"
	PrivatePrefix = "cua-ed25519-private:"
)

// EnvVar holds a private key in its text form, as an alternative to the
// key file (a key kept in a secret manager and handed to the process).
// [TakeEnv] moves it out of the environment at start, so no child process
// inherits it (invariant 15).
const EnvVar = "CUA_SIGNING_KEY"

// Dir and File place the key file under a data directory:
// <data-dir>/keys/signing.key.
const (
	Dir  = "keys"
	File = "signing.key"
)

// maxKeyFile bounds what Load reads of a key file.
const maxKeyFile = 4 << 10

// ErrNoKey: no key is configured (no CUA_SIGNING_KEY and no key file).
var ErrNoKey = errors.New("no signing key configured")

// ErrExists: Init found a key file and was not told to replace it.
var ErrExists = errors.New("a signing key exists")

// Path is the key file of dataDir.
func Path(dataDir string) string { return filepath.Join(dataDir, Dir, File) }

// taken is the CUA_SIGNING_KEY value TakeEnv moved out of the environment
// (the environment is process-wide, so this is too).
var taken struct {
	sync.Mutex
	v  string
	ok bool
}

// TakeEnv moves CUA_SIGNING_KEY out of this process's environment into
// memory, where Load finds it. Call it once at start, before any child
// process is started.
func TakeEnv() {
	taken.Lock()
	defer taken.Unlock()
	if v, ok := os.LookupEnv(EnvVar); ok {
		taken.v, taken.ok = v, true
		os.Unsetenv(EnvVar)
	}
}

// Taken reports whether TakeEnv found CUA_SIGNING_KEY.
func Taken() bool {
	taken.Lock()
	defer taken.Unlock()
	return taken.ok && taken.v != ""
}

// Load returns the key runs under dataDir sign with and where it came from
// (EnvVar, or the key file's path): the key TakeEnv took, else
// dataDir's key file. No key at all is ErrNoKey; a key that is configured
// but unusable (a malformed value, a key file readable by group or others,
// not a regular file) is another error, so a run never silently signs
// nothing when a key was meant.
func Load(dataDir string) (ed25519.PrivateKey, string, error) {
	taken.Lock()
	v, ok := taken.v, taken.ok && taken.v != ""
	taken.Unlock()
	if ok {
		k, err := ParsePrivate(v)
		if err != nil {
			return nil, EnvVar, fmt.Errorf("%s: %w", EnvVar, err)
		}
		return k, EnvVar, nil
	}
	if dataDir == "" {
		return nil, "", ErrNoKey
	}
	p := Path(dataDir)
	k, err := ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, p, ErrNoKey
	}
	return k, p, err
}

// ReadFile reads a private key file: a regular file, not readable by
// group or others, at most a few KiB, holding the private text form.
func ReadFile(p string) (ed25519.PrivateKey, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("signing key %s: not a regular file", p)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("signing key %s: mode %04o, want 0600 (readable by group or others)", p, fi.Mode().Perm())
	}
	raw, err := fsx.ReadFileNoFollow(p, maxKeyFile)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: unreadable or larger than %d bytes: %w", p, maxKeyFile, err)
	}
	k, err := ParsePrivate(string(raw))
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", p, err)
	}
	return k, nil
}

// Init creates a new key at dataDir's key file: the file 0600, its
// directory 0700. An existing key file is refused (ErrExists, naming the
// path) unless force, which replaces it: bundles signed with the old key
// then verify only with the old public key. It returns the path and the
// new public key.
func Init(dataDir string, force bool) (string, ed25519.PublicKey, error) {
	p := Path(dataDir)
	if _, err := os.Lstat(p); err == nil && !force {
		return p, nil, fmt.Errorf("%w at %s: not replacing it (pass --force to replace it; bundles it signed then verify only with its public key)", ErrExists, p)
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return p, nil, fmt.Errorf("signing key: create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return p, nil, fmt.Errorf("signing key: chmod %s: %w", dir, err)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return p, nil, fmt.Errorf("signing key: generate: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".signing-*.tmp")
	if err != nil {
		return p, nil, fmt.Errorf("signing key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.WriteString(FormatPrivate(priv) + "\n")
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return p, nil, fmt.Errorf("signing key: write %s: %w", p, err)
		}
	} else {
		tmp.Close()
		return p, nil, fmt.Errorf("signing key: chmod: %w", err)
	}
	if !force {
		// Link refuses an existing name: two concurrent inits never both win.
		if err := os.Link(tmp.Name(), p); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return p, nil, fmt.Errorf("%w at %s: not replacing it (pass --force to replace it)", ErrExists, p)
			}
			return p, nil, fmt.Errorf("signing key: write %s: %w", p, err)
		}
		return p, pub, nil
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return p, nil, fmt.Errorf("signing key: write %s: %w", p, err)
	}
	return p, pub, nil
}

// FormatPublic is pub's text form, cua-ed25519:<base64>.
func FormatPublic(pub ed25519.PublicKey) string {
	return PublicPrefix + base64.StdEncoding.EncodeToString(pub)
}

// FormatPrivate is k's text form, cua-ed25519-private:<base64 seed>.
func FormatPrivate(k ed25519.PrivateKey) string {
	return PrivatePrefix + base64.StdEncoding.EncodeToString(k.Seed())
}

// ParsePublic reads a public key's text form (surrounding space ignored).
func ParsePublic(s string) (ed25519.PublicKey, error) {
	s = strings.TrimSpace(s)
	b64, ok := strings.CutPrefix(s, PublicPrefix)
	if !ok {
		return nil, fmt.Errorf("not a public key: want %s<base64>", PublicPrefix)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("not a public key: want %s and the base64 of %d bytes", PublicPrefix, ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(raw), nil
}

// ParsePrivate reads a private key's text form (surrounding space
// ignored). Its errors never hold the text.
func ParsePrivate(s string) (ed25519.PrivateKey, error) {
	s = strings.TrimSpace(s)
	b64, ok := strings.CutPrefix(s, PrivatePrefix)
	if !ok {
		return nil, fmt.Errorf("not a private key: want %s<base64>", PrivatePrefix)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != ed25519.SeedSize {
		return nil, fmt.Errorf("not a private key: want %s and the base64 of a %d-byte seed", PrivatePrefix, ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(raw), nil
}

// ReadPublic reads a public key given as its text form or as the path of
// a file holding it (what `cua keys export` prints).
func ReadPublic(s string) (ed25519.PublicKey, error) {
	if strings.HasPrefix(strings.TrimSpace(s), PublicPrefix) {
		return ParsePublic(s)
	}
	raw, err := fsx.ReadFile(s, maxKeyFile)
	if err != nil {
		return nil, fmt.Errorf("public key: neither %s<base64> nor a readable file of at most %d bytes: %w", PublicPrefix, maxKeyFile, err)
	}
	k, err := ParsePublic(string(raw))
	if err != nil {
		return nil, fmt.Errorf("public key file %s: %w", s, err)
	}
	return k, nil
}

// ID is a short fingerprint of pub (16 hex digits of its sha256), to name
// a key in output without printing it whole.
func ID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

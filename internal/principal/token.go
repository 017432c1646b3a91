package principal

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// tokenPrefix starts every principal token.
const tokenPrefix = "cuap_"

// The argon2id parameters of new hashes (OWASP's 19 MiB, two passes, one
// lane), the salt and the key length.
const (
	argonMemory  = 19456
	argonTime    = 2
	argonThreads = 1
	saltLen      = 16
	keyLen       = 32
)

// ParseToken returns the name a token "cuap_<name>_<64 hex>" names, and
// whether it has that form with a valid name.
func ParseToken(token string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '_')
	if i < 0 {
		return "", false
	}
	name, secret := rest[:i], rest[i+1:]
	if CheckName(name) != nil || len(secret) != 64 || strings.ToLower(secret) != secret {
		return "", false
	}
	if _, err := hex.DecodeString(secret); err != nil {
		return "", false
	}
	return name, true
}

// newToken returns a fresh token for name: 32 random bytes in hex.
func newToken(name string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("token for %s: %w", name, err)
	}
	return tokenPrefix + name + "_" + hex.EncodeToString(b[:]), nil
}

// hashSecret returns the argon2id hash of token in the PHC string form
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash> (unpadded base64).
func hashSecret(token string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash secret: %w", err)
	}
	key := argon2.IDKey([]byte(token), salt, argonTime, argonMemory, argonThreads, keyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// verifySecret reports whether token matches the PHC argon2id hash,
// comparing in constant time; a hash it cannot parse is an error.
func verifySecret(token, hash string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, errors.New("secret hash: not an argon2id PHC string")
	}
	var v int
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false, fmt.Errorf("secret hash: version %q: want v=%d", parts[2], argon2.Version)
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 || m > 1<<21 || t > 16 {
		return false, fmt.Errorf("secret hash: parameters %q: want m=N,t=N,p=N within bounds", parts[3])
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return false, errors.New("secret hash: bad salt")
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) < 16 || len(want) > 64 {
		return false, errors.New("secret hash: bad key")
	}
	got := argon2.IDKey([]byte(token), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

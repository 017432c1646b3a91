package capability

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/cuahq/cua/internal/domain"
)

// HashPrefix starts every content hash.
const HashPrefix = "sha256:"

// Canonical returns the RFC 8785 canonical JSON of c with defaults applied
// and without content_hash. c is not modified.
func Canonical(c *domain.Capability) ([]byte, error) {
	return CanonicalContext(context.Background(), c)
}

// CanonicalContext is Canonical that stops with ctx.Err() once ctx is done.
func CanonicalContext(ctx context.Context, c *domain.Capability) ([]byte, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode capability: %w", err)
	}
	var cp domain.Capability
	if err := json.Unmarshal(raw, &cp); err != nil {
		return nil, fmt.Errorf("copy capability: %w", err)
	}
	cp.ContentHash = ""
	ApplyDefaults(&cp)
	raw, err = json.Marshal(&cp)
	if err != nil {
		return nil, fmt.Errorf("encode capability: %w", err)
	}
	out, err := CanonicalJSON(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("canonicalize: %w", err)
	}
	return out, nil
}

// Hash returns the content hash of c: "sha256:" + hex(SHA-256(Canonical(c))).
func Hash(c *domain.Capability) (string, error) {
	return HashContext(context.Background(), c)
}

// HashContext is Hash that stops with ctx.Err() once ctx is done.
func HashContext(ctx context.Context, c *domain.Capability) (string, error) {
	b, err := CanonicalContext(ctx, c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return HashPrefix + hex.EncodeToString(sum[:]), nil
}

// hashDefaulted is HashContext for a c that ApplyDefaults has just run on
// (Parse's case): it skips Canonical's copy through JSON, which only exists
// to apply defaults without touching the caller's value. The golden hashes
// and TestHashDefaultedMatchesHash hold it to Hash's result.
func hashDefaulted(ctx context.Context, c *domain.Capability) (string, error) {
	cp := *c
	cp.ContentHash = ""
	raw, err := json.Marshal(&cp)
	if err != nil {
		return "", fmt.Errorf("encode capability: %w", err)
	}
	b, err := CanonicalJSON(ctx, raw)
	if err != nil {
		return "", fmt.Errorf("canonicalize: %w", err)
	}
	sum := sha256.Sum256(b)
	return HashPrefix + hex.EncodeToString(sum[:]), nil
}

package evidence

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Publisher copies a closed bundle to a shared evidence store (see
// internal/evidence/evstore): every file, then manifest.json and
// manifest.sig last.
type Publisher interface {
	Publish(ctx context.Context, runID, dir string) error
}

// PublishTimeout bounds one bundle's publish at Close.
const PublishTimeout = 5 * time.Minute

// UnpublishedDir is the directory under <data-dir>/runs that holds a note
// per run whose publish failed (<run-id>.txt: the store and the error); the
// run's local bundle stays where it is, whole and signed.
const UnpublishedDir = ".unpublished"

var publishers sync.Map // cleaned absolute data root → Publisher

// PublishTo makes every bundle opened under data root root be published
// with p when it is closed, until the returned func is called. A publish
// failure never fails Close: it is logged (slog), noted in
// <root>/runs/.unpublished/<run-id>.txt and kept as the bundle's
// PublishErr; the local bundle stays.
func PublishTo(root string, p Publisher) (undo func()) {
	key := rootKey(root)
	publishers.Store(key, p)
	return func() { publishers.CompareAndDelete(key, p) }
}

func rootKey(root string) string {
	if abs, err := filepath.Abs(root); err == nil {
		return filepath.Clean(abs)
	}
	return filepath.Clean(root)
}

// publisherFor is the Publisher registered for root, nil for none.
func publisherFor(root string) Publisher {
	if p, ok := publishers.Load(rootKey(root)); ok {
		return p.(Publisher)
	}
	return nil
}

// PublishErr is the error of the bundle's publish at Close (nil when it
// was published or no store is configured).
func (b *Bundle) PublishErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.publishErr
}

// publish runs after the manifest (and signature) are written; the caller
// holds b.mu.
func (b *Bundle) publish() {
	p := publisherFor(b.root)
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
	defer cancel()
	err := p.Publish(ctx, b.runID, b.dir)
	if err == nil {
		return
	}
	b.publishErr = fmt.Errorf("evidence: publish run %s: %w", b.runID, err)
	slog.Default().Error("evidence: publish failed; the local bundle stays", slog.String("run_id", b.runID),
		slog.String("bundle", b.dir), slog.Any("error", err))
	note := filepath.Join(b.root, "runs", UnpublishedDir)
	if mkErr := os.MkdirAll(note, 0o700); mkErr == nil {
		_ = os.WriteFile(filepath.Join(note, b.runID+".txt"), []byte(b.publishErr.Error()+"\n"), 0o600)
	}
}

package catalog_test

import (
	"errors"
	"testing"

	"github.com/cuahq/cua/internal/store"
)

// TestNotFoundNamesTheThingAndTheFix: every reference the catalog cannot
// find is named as the caller gave it, with what is missing and the
// command that lists what there is, in one line; each still matches
// store.ErrNotFound.
func TestNotFoundNamesTheThingAndTheFix(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	const hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"version", func() error { _, _, err := tb.cat.Resolve(tb.ctx, "memberdesk.x@1.0.0"); return err },
			"memberdesk.x@1.0.0: no such version in the catalog (cua catalog list)"},
		{"version of a stored id", func() error { _, err := tb.cat.Show(tb.ctx, "memberdesk.transfer_funds@9.9.9"); return err },
			"memberdesk.transfer_funds@9.9.9: no such version in the catalog (cua catalog list)"},
		{"content hash", func() error { _, _, err := tb.cat.Resolve(tb.ctx, hash); return err },
			hash + ": no version with this content hash in the catalog (cua catalog list)"},
		{"bare id", func() error { _, _, err := tb.cat.Resolve(tb.ctx, "memberdesk.x"); return err },
			"memberdesk.x: no sealed version of this id in the catalog (cua catalog list; cua catalog add FILE adds one)"},
		{"approval", func() error { _, err := tb.cat.Revoke(tb.ctx, "ap-nope"); return err },
			"approval ap-nope: no such approval in the catalog (cua catalog show REF lists a version's approvals)"},
		{"run", func() error { _, err := tb.cat.Run(tb.ctx, "r-nope"); return err },
			"run r-nope: no such run in the catalog (cua runs list)"},
	}
	for _, tt := range tests {
		err := tt.call()
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v\nwant %s", tt.name, err, tt.want)
		}
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v does not match store.ErrNotFound", tt.name, err)
		}
	}
}

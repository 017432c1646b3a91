package catalog_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

func TestSplitAllowed(t *testing.T) {
	t.Parallel()
	got := catalog.SplitAllowed(map[string]string{"to_account": "SAV-1,SAV-2", "memo": "x"})
	want := map[string][]string{"to_account": {"SAV-1", "SAV-2"}, "memo": {"x"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SplitAllowed = %v, want %v", got, want)
	}
}

func TestOverlaySetFields(t *testing.T) {
	t.Parallel()
	var o catalog.Overlay
	if err := o.SetFields(map[string]string{"base_url": "http://127.0.0.1:9"}); err != nil || o.BaseURL != "http://127.0.0.1:9" {
		t.Fatalf("base_url: %+v, %v", o, err)
	}
	if err := o.SetFields(map[string]string{"tenant": "x"}); err == nil || !strings.Contains(err.Error(), "tenant: only base_url") {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestParseRunStatus(t *testing.T) {
	t.Parallel()
	for in, ok := range map[string]bool{"": true, "SUCCESS": true, "NEEDS_HUMAN": true, "success": false, "DONE": false} {
		got, err := catalog.ParseRunStatus(in)
		if (err == nil) != ok || (ok && got != domain.RunStatus(in)) {
			t.Errorf("ParseRunStatus(%q) = %q, %v", in, got, err)
		}
	}
}

func TestWriteAdded(t *testing.T) {
	t.Parallel()
	v := store.Version{CapabilityID: "a.b", Version: "1.0.0", ContentHash: "sha256:00"}
	for created, want := range map[bool]string{true: "added a.b@1.0.0 sha256:00\n", false: "unchanged a.b@1.0.0 sha256:00\n"} {
		var b bytes.Buffer
		if err := catalog.WriteAdded(&b, catalog.AddResult{Version: v, Created: created}); err != nil || b.String() != want {
			t.Errorf("WriteAdded(created=%v) = %q, %v; want %q", created, b.String(), err, want)
		}
	}
}

package capability

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestAppendTreeJSONDecodesLikeMarshal holds the tree encoder that decode
// uses to encoding/json.Marshal: both texts decode to the same value.
func TestAppendTreeJSONDecodesLikeMarshal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tree any
	}{
		{"scalars", []any{nil, true, false, "", int64(-7), int64(1 << 62), 0.5, 1e6, 1e21, 1e-7, -2.5}},
		{"strings", []any{"a\"b\\c", "tab\there\nline\r\x01\x1f", "<>&\u2028\u2029", "\u00e9\u4e2d\U0001f600"}},
		{"nested", map[string]any{"z": []any{map[string]any{"y": int64(1), "x": map[string]any{}}}, "a": []any{}, "\"k\"": "v"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := appendTreeJSON(nil, tc.tree)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(tc.tree)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("appendTreeJSON %s decodes to %v, Marshal %s to %v", got, g, want, w)
			}
		})
	}
	if _, err := appendTreeJSON(nil, []any{struct{}{}}); err == nil {
		t.Error("appendTreeJSON accepted a type convert never builds")
	}
}

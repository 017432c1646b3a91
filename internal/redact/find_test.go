package redact

import (
	"slices"
	"testing"
)

func TestFind(t *testing.T) {
	t.Parallel()
	r := New(WithLiterals("Canary-7fQ2-zX9k-Lm4P-0042"))
	text := "a sk-proj-abcdefghijklmnop1234 b\n" +
		"-----BEGIN RSA PRIVATE KEY-----\n" +
		"c CANARY-7FQ2-ZX9K d AKIAABCDEFGHIJKLMNOP\n"
	var kinds []Kind
	for _, f := range r.Find(text) {
		kinds = append(kinds, f.Kind)
		if f.Start < 0 || f.End > len(text) || f.Start >= f.End {
			t.Errorf("bad range %+v", f)
		}
	}
	want := []Kind{KindKey, KindPrivateKey, KindLiteral, KindKey}
	if !slices.Equal(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}
	if got := New().Find("nothing secret here, 2024-05-01"); len(got) != 0 {
		t.Errorf("Find on clean text = %+v", got)
	}
}

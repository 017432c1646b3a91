package surfacetest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/surfacetest"
)

func TestServeFixture(t *testing.T) {
	t.Parallel()
	pageURL := surfacetest.Serve(t)
	tests := []struct{ page, want string }{
		{surfacetest.PageMain, "<title>Conformance</title>"},
		{surfacetest.PageSecond, "<h1>Second</h1>"},
		{surfacetest.PageFrames, `<iframe name="nav"`},
		{surfacetest.PageForm, `<form method="post" action="sent.html">`},
		{surfacetest.PageSent, "<h1>Sent</h1>"},
	}
	for _, tc := range tests {
		t.Run(tc.page, func(t *testing.T) {
			resp, err := http.Get(pageURL(tc.page))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tc.want) {
				t.Fatalf("GET %s: %d, body lacks %q", tc.page, resp.StatusCode, tc.want)
			}
		})
	}
}

func TestFindMatchesCanonicalRoles(t *testing.T) {
	t.Parallel()
	snap := &domain.UiSnapshot{Nodes: []domain.Node{
		{Index: 0, Role: "document", Name: "Conformance", Parent: -1, Children: []int{1, 2}},
		{Index: 1, Role: "text", Name: "Hello,  Ada", Parent: 0},
		{Index: 2, Role: "button", Name: "Open", Parent: 0, Frame: "nav"},
	}}
	if _, ok := surfacetest.Find(snap, "document", "Conformance", ""); !ok {
		t.Error("document not found")
	}
	if _, ok := surfacetest.Find(snap, "button", "Open", ""); ok {
		t.Error("a node of frame nav matched the top frame")
	}
	if _, ok := surfacetest.Find(snap, "button", "Open", "*"); !ok {
		t.Error("frame * did not match")
	}
	if !surfacetest.HasText(snap, "Hello, Ada", "") {
		t.Error("HasText does not clean whitespace")
	}
	// A platform's own spelling is the adapter's to map, never the suite's.
	raw := &domain.UiSnapshot{Nodes: []domain.Node{{Index: 0, Role: "RootWebArea", Name: "Conformance", Parent: -1}}}
	if _, ok := surfacetest.Find(raw, "document", "Conformance", ""); ok {
		t.Error("Find translated a platform role name")
	}
}

func TestServeFixtureAnswersTheFormPostOnly(t *testing.T) {
	t.Parallel()
	pageURL := surfacetest.Serve(t)
	tests := []struct {
		page   string
		status int
	}{
		{surfacetest.PageSent, http.StatusOK},
		{surfacetest.PageMain, http.StatusMethodNotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.page, func(t *testing.T) {
			resp, err := http.Post(pageURL(tc.page), "application/x-www-form-urlencoded", strings.NewReader("amount=5"))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("POST %s: %d, want %d", tc.page, resp.StatusCode, tc.status)
			}
			if tc.status == http.StatusOK && !strings.Contains(string(body), "<h1>Sent</h1>") {
				t.Fatalf("POST %s: body lacks the Sent page", tc.page)
			}
		})
	}
}

package browser

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
)

// netLogEvents reads Chromium's --log-net-log file: each event's type name
// and parameters. A log cut short in its event list (the browser stopped
// mid-write) is closed before it is parsed.
func netLogEvents(t *testing.T, path string) []netEvent {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int            `json:"type"`
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &log); err != nil {
		cut := append(bytes.TrimRight(bytes.TrimSpace(raw), ","), "]}"...)
		if err2 := json.Unmarshal(cut, &log); err2 != nil {
			t.Fatalf("net log %s: %v", path, err)
		}
	}
	names := map[int]string{}
	for n, id := range log.Constants.LogEventTypes {
		names[id] = n
	}
	out := make([]netEvent, 0, len(log.Events))
	for _, e := range log.Events {
		out = append(out, netEvent{names[e.Type], e.Params})
	}
	return out
}

type netEvent struct {
	typ    string
	params map[string]any
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// A launched browser sends no DNS query and opens no TCP connection to
// anything but loopback while it starts, loads the app and idles: its own
// services (component updater, account list, network time) are refused
// before a name leaves the machine. A UDP "connect" sends nothing (the
// resolver's IPv6 reachability probe), so only TCP is counted.
func TestLaunchedBrowserTalksOnlyToLoopback(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "net.json")
	br, err := Launch(t.Context(), Options{netLog: logPath})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	srv := server(t)
	eng, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{s: newTestSession(t, br), eng: eng, ctx: t.Context(), srv: srv}
	e.must(t, domain.Action{Type: domain.ActNavigate, URL: srv.URL + "/"}, nil, "")
	time.Sleep(8 * time.Second) // Chromium's background calls start 2-5 s after launch
	e.s.Close()
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	var asked, connected []string
	sawApp := false
	for _, ev := range netLogEvents(t, logPath) {
		switch ev.typ {
		case "DNS_TRANSACTION_QUERY":
			if q, ok := ev.params["qname"].(string); ok {
				asked = append(asked, q)
			}
		case "TCP_CONNECT_ATTEMPT":
			if a, ok := ev.params["address"].(string); ok {
				if !loopback(a) {
					connected = append(connected, a)
				}
				sawApp = sawApp || strings.HasSuffix(srv.URL, a)
			}
		}
	}
	if !sawApp {
		t.Fatalf("the net log shows no connection to the app at %s: it does not record what it should", srv.URL)
	}
	slices.Sort(asked)
	if len(asked) > 0 || len(connected) > 0 {
		t.Errorf("Chromium looked up %v and connected to %v", slices.Compact(asked), connected)
	}
}

func TestResolverRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		app  []string
		want string
	}{
		{nil, "MAP accounts.google.com ~NOTFOUND, MAP clients2.google.com ~NOTFOUND, MAP update.googleapis.com ~NOTFOUND"},
		{[]string{"127.0.0.1", "http://127.0.0.1:8811"}, "MAP accounts.google.com ~NOTFOUND, MAP clients2.google.com ~NOTFOUND, MAP update.googleapis.com ~NOTFOUND"},
		{[]string{"https://accounts.google.com"}, "MAP clients2.google.com ~NOTFOUND, MAP update.googleapis.com ~NOTFOUND"},
		{[]string{"*.google.com"}, "MAP update.googleapis.com ~NOTFOUND"},
		{[]string{"googleapis.com", "google.com"}, ""},
		{[]string{"notgoogle.com"}, "MAP accounts.google.com ~NOTFOUND, MAP clients2.google.com ~NOTFOUND, MAP update.googleapis.com ~NOTFOUND"},
	} {
		if got := ResolverRules(tc.app); got != tc.want {
			t.Errorf("ResolverRules(%q) = %q, want %q", tc.app, got, tc.want)
		}
	}
}

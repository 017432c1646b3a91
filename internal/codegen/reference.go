package codegen

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cuahq/cua/internal/capability"
)

// MemberDeskFrames are the iframe titles of MemberDesk (cua mockapp): its
// frames are named nav and content.
var MemberDeskFrames = map[string]string{"nav": "Navigation", "content": "Workspace"}

// ReferenceCases are the data table of the reference lookup
// (memberdesk.savings_balance) against MemberDesk's fixtures: two members
// found, and each of its three business outcomes.
var ReferenceCases = []Case{
	{Name: "active member", Inputs: map[string]string{"member_id": "12345"}, Expect: ExpectSuccess},
	{Name: "closed member", Inputs: map[string]string{"member_id": "23456"}, Expect: ExpectSuccess},
	{Name: "no such member", Inputs: map[string]string{"member_id": "99999"}, Expect: "member_not_found"},
	{Name: "no savings account", Inputs: map[string]string{"member_id": "34567"}, Expect: "no_savings_account"},
	{Name: "restricted record", Inputs: map[string]string{"member_id": "45678"}, Expect: "member_restricted"},
}

// WriteReference writes the spec of the reference lookup l (with its
// prerequisites from lib) to path, with [ReferenceCases] and
// [MemberDeskFrames], Chromium started with browserArgs. It returns the
// line the demo prints to say how to run it against baseURL.
func WriteReference(l *capability.Loaded, lib Resolver, browserArgs []string, path, baseURL string) (string, error) {
	spec, err := Generate(l, Options{Cases: ReferenceCases, FrameTitles: MemberDeskFrames, BrowserArgs: browserArgs, Library: lib, BaseURL: baseURL})
	if err != nil {
		return "", err
	}
	if err := WriteFile(path, spec); err != nil {
		return "", err
	}
	return RunHint(path, baseURL, Secrets(l, lib)), nil
}

// RunHint is how to run a written spec: install @playwright/test next to
// it, set the base URL and the secrets' variables, run npx playwright test.
// No browser download is needed: the spec launches the system Chromium.
func RunHint(path, baseURL string, secrets []string) string {
	var env []string
	if baseURL != "" {
		env = append(env, "CUA_BASE_URL="+baseURL)
	}
	for _, s := range secrets {
		env = append(env, s+"=…")
	}
	dir, file := filepath.Split(path)
	cd := ""
	if dir != "" {
		cd = "cd " + shellQuote(filepath.Clean(dir)) + " && "
	}
	return fmt.Sprintf("run it with: %snpm install -D @playwright/test && %s npx playwright test %s", cd, strings.Join(env, " "), shellQuote(file))
}

// shellQuote quotes s for a POSIX shell when it holds anything but safe
// characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/+:=@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Secrets lists the environment variables a spec of l reads: its secrets,
// its prerequisites' and its sensitive inputs', sorted.
func Secrets(l *capability.Loaded, lib Resolver) []string {
	set := map[string]bool{}
	var walk func(l *capability.Loaded, depth int)
	walk = func(l *capability.Loaded, depth int) {
		c := l.Capability
		for _, in := range c.Inputs {
			if in.Sensitive {
				set[SecretEnv(in.Name)] = true
			}
		}
		for _, st := range c.Steps {
			if st.Value.IsSecret() {
				set[SecretEnv(st.Value.Secret)] = true
			}
		}
		if lib == nil || depth > 3 {
			return
		}
		for _, p := range c.Prerequisites {
			if sub, err := lib.Lookup(p.Capability); err == nil {
				walk(sub, depth+1)
			}
		}
	}
	walk(l, 0)
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

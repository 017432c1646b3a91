package mockapp

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestFramePages(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})

	root := b.get(t, "/")
	if root.status != http.StatusOK {
		t.Fatalf("GET / = %d", root.status)
	}
	for _, want := range []string{
		"<title>MemberDesk</title>",
		`<iframe name="nav" title="Navigation" src="/nav"`,
		`<iframe name="content" title="Workspace" src="/content/home"`,
	} {
		if !strings.Contains(root.body, want) {
			t.Errorf("GET / lacks %q", want)
		}
	}

	nav := b.get(t, "/nav")
	for _, l := range navLinks {
		want := regexp.MustCompile(`<a href="` + l.Href + `" target="content"[^>]*>` + l.Text + `</a>`)
		if !want.MatchString(nav.body) {
			t.Errorf("nav lacks link %q → %s in the content frame", l.Text, l.Href)
		}
	}
	if !hasButton(nav.body, "Search") {
		t.Error("nav lacks the decoy Search button")
	}
	if !strings.Contains(nav.body, `<form method="get" action="/nav"`) {
		t.Error("the decoy search must be a harmless GET /nav form")
	}

	q := b.get(t, "/nav?q="+url.QueryEscape(`<img src=x onerror=alert(1)>`))
	if q.status != http.StatusOK || strings.Contains(q.body, "<img src=x") {
		t.Errorf("nav search echoes markup unescaped: %d %q", q.status, q.body)
	}
	if !strings.Contains(q.body, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Error("nav search does not echo the escaped query")
	}
}

func TestContentNeedsSession(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	tests := []struct {
		method string
		path   string
	}{
		{"GET", homePath},
		{"GET", signoffPath},
		{"GET", searchPath},
		{"POST", searchPath},
		{"GET", "/content/member/12345"},
		{"GET", "/content/member/abc"},
		{"GET", subaccountPath},
		{"POST", subaccountPath},
		{"GET", transferPath},
		{"POST", reviewPath},
		{"POST", submitPath},
		{"GET", "/content/unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			t.Parallel()
			var form url.Values
			if tt.method == "POST" {
				form = url.Values{"member": {"12345"}}
			}
			resp := b.do(t, b.newClient(t), tt.method, tt.path, form)
			if resp.status != http.StatusSeeOther || resp.location() != signonPath {
				t.Errorf("%s %s without session = %d → %q, want 303 → %s", tt.method, tt.path, resp.status, resp.location(), signonPath)
			}
		})
	}
	t.Run("public", func(t *testing.T) {
		t.Parallel()
		c := b.newClient(t)
		if resp := b.do(t, c, "GET", signonPath, nil); resp.status != http.StatusOK {
			t.Errorf("GET signon = %d, want 200", resp.status)
		}
		if resp := b.do(t, c, "POST", noticeAckPath, url.Values{}); resp.status != http.StatusSeeOther || resp.location() != homePath {
			t.Errorf("POST notice ack = %d → %q, want 303 → %s", resp.status, resp.location(), homePath)
		}
	})
	t.Run("forged cookie", func(t *testing.T) {
		t.Parallel()
		c := b.newClient(t)
		u, _ := url.Parse(b.base)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: "md-1-0001"}})
		if resp := b.do(t, c, "GET", homePath, nil); resp.status != http.StatusSeeOther {
			t.Errorf("GET home with an unissued session = %d, want 303", resp.status)
		}
	})
}

func TestSignOn(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{Operator: "OP2002", Password: "s3cret-Teller!"})
	tests := []struct {
		name     string
		operator string
		password string
		wantOK   bool
	}{
		{name: "valid", operator: "OP2002", password: "s3cret-Teller!", wantOK: true},
		{name: "wrong password", operator: "OP2002", password: "wrong-pass-9"},
		{name: "wrong operator", operator: "OP1001", password: "s3cret-Teller!"},
		{name: "case differs", operator: "op2002", password: "s3cret-Teller!"},
		{name: "empty", operator: "", password: ""},
		{name: "password prefix", operator: "OP2002", password: "s3cret-Teller"},
		{name: "markup operator", operator: `"><b>x</b>`, password: "zz-wrong-pw"},
		{name: "password in operator field", operator: "s3cret-Teller!", password: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := b.newClient(t)
			resp := b.do(t, c, "POST", signonPath, url.Values{"operator": {tt.operator}, "password": {tt.password}})
			if tt.wantOK {
				if resp.status != http.StatusSeeOther || resp.location() != homePath {
					t.Fatalf("sign on = %d → %q, want 303 → home", resp.status, resp.location())
				}
				home := b.do(t, c, "GET", homePath, nil)
				if !hasHeading(home.body, "Welcome") || !strings.Contains(home.body, "Signed on as OP2002") {
					t.Errorf("home after sign on: %q", home.body)
				}
				return
			}
			if resp.status != http.StatusOK || !hasRole(resp.body, "alert", "Invalid operator ID or password") {
				t.Errorf("bad sign on = %d, body %q; want the alert", resp.status, resp.body)
			}
			if !hasHeading(resp.body, "Sign On") || strings.Contains(resp.header.Get("Set-Cookie"), sessionCookie) {
				t.Error("bad sign on must re-render the form and set no session")
			}
			if tt.operator != "" && strings.Contains(resp.body, tt.operator) {
				t.Error("the operator field was echoed")
			}
			if strings.Contains(resp.body, `type="password" name="password" value`) {
				t.Error("password field carries a value")
			}
		})
	}
}

func TestSignOnForm(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	resp := b.get(t, signonPath)
	for _, want := range []string{
		"<h1>Sign On</h1>",
		`<label>Operator ID <input name="operator"`,
		`<label>Password <input type="password" name="password"`,
	} {
		if !strings.Contains(resp.body, want) {
			t.Errorf("sign-on form lacks %q", want)
		}
	}
	if !hasButton(resp.body, "Sign on") {
		t.Error(`sign-on form lacks button "Sign on"`)
	}
}

func TestSignOffDropsSession(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	if n := b.state(t).Sessions; n != 1 {
		t.Fatalf("sessions after sign on = %d, want 1", n)
	}
	b.signOn(t) // signing on again replaces the session
	if n := b.state(t).Sessions; n != 1 {
		t.Fatalf("sessions after a second sign on = %d, want 1", n)
	}
	resp := b.get(t, signoffPath)
	if resp.status != http.StatusSeeOther || resp.location() != signonPath {
		t.Fatalf("sign off = %d → %q", resp.status, resp.location())
	}
	if n := b.state(t).Sessions; n != 0 {
		t.Errorf("sessions after sign off = %d, want 0", n)
	}
	if resp := b.get(t, homePath); resp.status != http.StatusSeeOther {
		t.Errorf("home after sign off = %d, want 303", resp.status)
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)

	form := b.get(t, searchPath)
	if !hasHeading(form.body, "Member Search") || !hasButton(form.body, "Search") || !hasButton(form.body, "Clear") {
		t.Fatalf("search form: %q", form.body)
	}
	input := regexp.MustCompile(`<input type="text" name="member"[^>]*>`).FindString(form.body)
	if !strings.Contains(input, `title="Member number"`) {
		t.Errorf("search input %q is not named by its title", input)
	}
	for _, forbidden := range []string{"<label", "placeholder", "aria-"} {
		if strings.Contains(form.body, forbidden) {
			t.Errorf("search page has %q: the field must be named by its title only", forbidden)
		}
	}
	if !regexp.MustCompile(`<button type="submit"[^>]*>Search</button>\s*<button type="reset"[^>]*>Clear</button>`).MatchString(form.body) {
		t.Error(`"Clear" must sit right beside "Search"`)
	}

	tests := []struct {
		name       string
		member     string
		wantStatus int
		wantTo     string
		wantRole   string
		wantText   string
	}{
		{name: "known", member: "12345", wantStatus: 303, wantTo: "/content/member/12345"},
		{name: "restricted", member: "45678", wantStatus: 303, wantTo: "/content/member/45678"},
		{name: "unknown", member: "99999", wantStatus: 200, wantRole: "status", wantText: "Member not found"},
		{name: "four digits", member: "1234", wantStatus: 400, wantRole: "alert", wantText: "Member number must be 5 digits"},
		{name: "six digits", member: "123456", wantStatus: 400, wantRole: "alert", wantText: "Member number must be 5 digits"},
		{name: "letters", member: "abcde", wantStatus: 400, wantRole: "alert", wantText: "Member number must be 5 digits"},
		{name: "fullwidth digits", member: "１２３４５", wantStatus: 400, wantRole: "alert", wantText: "Member number must be 5 digits"},
		{name: "padded", member: " 12345", wantStatus: 400, wantRole: "alert", wantText: "Member number must be 5 digits"},
		{name: "empty", member: "", wantStatus: 400, wantRole: "alert", wantText: "Member number must be 5 digits"},
		{name: "injection", member: `"><script>alert(1)</script>`, wantStatus: 400, wantRole: "alert", wantText: "Member number must be 5 digits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := b.post(t, searchPath, url.Values{"member": {tt.member}})
			if resp.status != tt.wantStatus {
				t.Fatalf("search %q = %d, want %d", tt.member, resp.status, tt.wantStatus)
			}
			if tt.wantTo != "" {
				if resp.location() != tt.wantTo {
					t.Errorf("search %q → %q, want %q", tt.member, resp.location(), tt.wantTo)
				}
				return
			}
			if !hasHeading(resp.body, "Member Search") || !hasRole(resp.body, tt.wantRole, tt.wantText) {
				t.Errorf("search %q: want the search page with %s %q, got %q", tt.member, tt.wantRole, tt.wantText, resp.body)
			}
			if strings.Contains(resp.body, "<script>") {
				t.Error("input echoed unescaped")
			}
		})
	}
	inj := b.post(t, searchPath, url.Values{"member": {`"><script>alert(1)</script>`}})
	if !strings.Contains(inj.body, `value="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`) {
		t.Errorf("injected input not echoed escaped: %q", inj.body)
	}
}

func TestMemberPages(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	tests := []struct {
		id          string
		wantStatus  int
		wantHeading string
		wantRows    []row
		wantText    string
	}{
		{id: "12345", wantStatus: 200, wantHeading: "Member Details", wantRows: []row{
			{"Member number", "12345"}, {"Name", "Jane Doe"}, {"Status", "Active"}, {"Savings Balance", "$1,234.56"}, {"As of", "11/30/2026"},
		}},
		{id: "23456", wantStatus: 200, wantHeading: "Member Details", wantRows: []row{
			{"Member number", "23456"}, {"Name", "Robert Roe"}, {"Status", "Closed"}, {"Savings Balance", "$0.00"}, {"As of", "11/30/2026"},
		}},
		{id: "34567", wantStatus: 200, wantHeading: "Member Details", wantRows: []row{
			{"Member number", "34567"}, {"Name", "Ann Example"}, {"Status", "Active"}, {"As of", "11/30/2026"},
		}, wantText: "<p class=\"md-no-savings\">No savings account on file</p>"},
		{id: "45678", wantStatus: 200, wantHeading: "Restricted Record", wantText: "This record is restricted. Refer to a supervisor."},
		{id: "56789", wantStatus: 200, wantHeading: "Member Details", wantRows: []row{
			{"Member number", "56789"}, {"Name", "Carl Large"}, {"Status", "Active"}, {"Savings Balance", "$12,345,678.90"}, {"As of", "11/30/2026"},
		}},
		{id: "99999", wantStatus: 404, wantHeading: "Member Not Found", wantText: "Member not found"},
		{id: "1234", wantStatus: 400, wantHeading: "Invalid Member Number", wantText: "Invalid member number"},
		{id: "abcde", wantStatus: 400, wantHeading: "Invalid Member Number", wantText: "Invalid member number"},
		{id: "123456", wantStatus: 400, wantHeading: "Invalid Member Number", wantText: "Invalid member number"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			resp := b.get(t, memberPrefix+tt.id)
			if resp.status != tt.wantStatus || !hasHeading(resp.body, tt.wantHeading) {
				t.Fatalf("member %s = %d, want %d with heading %q: %q", tt.id, resp.status, tt.wantStatus, tt.wantHeading, resp.body)
			}
			if got := tableRows(resp.body); !slices.Equal(got, tt.wantRows) {
				t.Errorf("rows = %v, want %v", got, tt.wantRows)
			}
			if !strings.Contains(resp.body, tt.wantText) {
				t.Errorf("page lacks %q", tt.wantText)
			}
			if tt.wantRows == nil {
				return
			}
			main := resp.body[strings.Index(resp.body, "<h1>"):strings.Index(resp.body, "</table>\n</td></tr></table>\n</td></tr></table>")]
			if strings.Count(main, "<table") != 3 {
				t.Errorf("want three nested layout tables, got %d", strings.Count(main, "<table"))
			}
			for _, forbidden := range []string{"<th", "<caption", "role=", "<label"} {
				if strings.Contains(main, forbidden) {
					t.Errorf("member page has %q; the data must sit in bare layout tables", forbidden)
				}
			}
		})
	}
}

package replay_test

import (
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/sim"
)

// base is the run's base URL; every flow is served under it.
const base = "http://127.0.0.1/app"

// faults returns an effect that makes the first n loads fail with 502 (every
// load when n < 0).
func faults(n int) sim.Effect {
	return func(ev *sim.Event) error {
		if n < 0 || ev.N <= n {
			ev.Fault(502)
		}
		return nil
	}
}

// lookupConf varies the lookup flow; the zero value is the happy path.
type lookupConf struct {
	searchLabel           string // default "Search"
	secondSearch          bool   // another "Search" button, in frame "side"
	status, balance, asOf string // default "Active", "$1,234.56", "11/30/2026"
	entryFaults           int    // 502 on the first n loads of the search screen (-1: all)
	entryDialog           *domain.Dialog
	afterSearch           []sim.Effect // run after the search lands
	detailsURL            string       // overrides the details screen's URL
}

// lookupApp serves testdata/lookup.yaml: a search screen (member number,
// Search), a details screen (a table of Status, Savings Balance, As of) and
// a not-found screen for member 99999.
func lookupApp(c lookupConf) *sim.Flow {
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	search := sim.Screen{Name: "search", Title: "Member Search", Dialog: c.entryDialog, Nodes: []sim.Node{
		{Role: "heading", Name: "Member Search"},
		{Role: "textbox", Name: "Member number"},
		{Role: "button", Name: or(c.searchLabel, "Search")},
	}}
	if c.secondSearch {
		search.Nodes = append(search.Nodes, sim.Node{Role: "button", Name: "Search", Frame: "side"})
	}
	f := sim.NewFlow(base,
		search,
		sim.Screen{Name: "details", Title: "Member Details", URL: c.detailsURL, Nodes: []sim.Node{
			{Role: "heading", Name: "Member Details"},
			{Role: "cell", Name: or(c.status, "Active"), Row: "Status"},
			{Role: "cell", Name: or(c.balance, "$1,234.56"), Row: "Savings Balance"},
			{Role: "cell", Name: or(c.asOf, "11/30/2026"), Row: "As of"},
		}},
		sim.Screen{Name: "notfound", Title: "Member Search", Nodes: []sim.Node{
			{Role: "heading", Name: "Member Search"},
			{Role: "text", Name: "Member not found"},
		}},
	)
	f.On("button", "Search", func(ev *sim.Event) error {
		if ev.Value("textbox", "Member number") == "99999" {
			return ev.Goto("notfound")
		}
		return ev.Goto("details")
	})
	f.On("button", "Search", c.afterSearch...)
	if c.entryFaults != 0 {
		f.OnLoad("search", faults(c.entryFaults))
	}
	return f
}

// transferApp serves testdata/transfer.yaml: an amount and a "Submit
// transfer" button that posts to the ledger and shows the confirmation.
func transferApp(confirmation string) *sim.Flow {
	f := sim.NewFlow(base,
		sim.Screen{Name: "form", Title: "Transfer", Nodes: []sim.Node{
			{Role: "heading", Name: "Transfer"},
			{Role: "textbox", Name: "Amount"},
			{Role: "button", Name: "Submit transfer"},
		}},
		sim.Screen{Name: "done", Title: "Transfer posted", Nodes: []sim.Node{
			{Role: "heading", Name: "Transfer posted"},
			{Role: "cell", Name: confirmation, Row: "Confirmation"},
		}},
	)
	f.On("button", "Submit transfer", func(ev *sim.Event) error {
		ev.Append("transfer " + ev.Value("textbox", "Amount"))
		return ev.Goto("done")
	})
	return f
}

// journalApp serves testdata/journal.yaml: entry (Memo, "Post entry", which
// posts to the ledger), posted (Note, Finish) and finished. post and finish
// are extra effects of the two buttons; finish defaults to going to
// finished.
func journalApp(post, finish []sim.Effect) *sim.Flow {
	f := sim.NewFlow(base,
		sim.Screen{Name: "entry", Title: "Journal entry", Nodes: []sim.Node{
			{Role: "heading", Name: "Journal entry"},
			{Role: "textbox", Name: "Memo"},
			{Role: "button", Name: "Post entry"},
		}},
		sim.Screen{Name: "posted", Title: "Entry posted", Nodes: []sim.Node{
			{Role: "heading", Name: "Entry posted"},
			{Role: "textbox", Name: "Note"},
			{Role: "button", Name: "Finish"},
		}},
		sim.Screen{Name: "finished", Title: "Finished", Nodes: []sim.Node{
			{Role: "heading", Name: "Finished"},
		}},
	)
	f.On("button", "Post entry", func(ev *sim.Event) error {
		ev.Append("posted " + ev.Value("textbox", "Memo"))
		return ev.Goto("posted")
	})
	f.On("button", "Post entry", post...)
	if finish == nil {
		finish = []sim.Effect{sim.Goto("finished")}
	}
	f.On("button", "Finish", finish...)
	return f
}

// signonApp serves testdata/signon.yaml: it lets in operator with password
// and shows "Access denied" to anyone else. With echo, the welcome page
// shows the password back in a "Signed in" row (a hostile app).
func signonApp(operator, password string, echo ...bool) *sim.Flow {
	home := []sim.Node{{Role: "heading", Name: "Welcome"}}
	if len(echo) > 0 && echo[0] {
		home = append(home, sim.Node{Role: "cell", Name: operator + " with " + password, Row: "Signed in"})
	}
	f := sim.NewFlow(base,
		sim.Screen{Name: "login", Title: "Sign on", Nodes: []sim.Node{
			{Role: "heading", Name: "Sign on"},
			{Role: "textbox", Name: "Operator"},
			{Role: "textbox", Name: "Password", Password: true},
			{Role: "button", Name: "Sign on"},
		}},
		sim.Screen{Name: "home", Title: "Welcome", Nodes: home},
		sim.Screen{Name: "denied", Title: "Sign on", Nodes: []sim.Node{
			{Role: "heading", Name: "Sign on"},
			{Role: "text", Name: "Access denied"},
		}},
	)
	f.On("button", "Sign on", func(ev *sim.Event) error {
		if ev.Value("textbox", "Operator") == operator && ev.Value("textbox", "Password") == password {
			return ev.Goto("home")
		}
		return ev.Goto("denied")
	})
	return f
}

// waiterApp serves testdata/waiter.yaml: "Start job" opens the job page,
// which says "Job ready" unless slow; "Close job" closes it.
func waiterApp(slow bool, closeJob ...sim.Effect) *sim.Flow {
	state := "Job ready"
	if slow {
		state = "Job running"
	}
	f := sim.NewFlow(base,
		sim.Screen{Name: "idle", Title: "Jobs", Nodes: []sim.Node{
			{Role: "heading", Name: "Jobs"},
			{Role: "button", Name: "Start job"},
		}},
		sim.Screen{Name: "job", Title: "Job", Nodes: []sim.Node{
			{Role: "heading", Name: "Job"},
			{Role: "text", Name: state},
			{Role: "button", Name: "Close job"},
		}},
		sim.Screen{Name: "ready", Title: "Job", Nodes: []sim.Node{
			{Role: "heading", Name: "Job"},
			{Role: "text", Name: "Job ready"},
			{Role: "button", Name: "Close job"},
		}},
		sim.Screen{Name: "closed", Title: "Job closed", Nodes: []sim.Node{
			{Role: "heading", Name: "Job closed"},
		}},
	)
	f.On("button", "Start job", sim.Goto("job"))
	if len(closeJob) == 0 {
		closeJob = []sim.Effect{sim.Goto("closed")}
	}
	f.On("button", "Close job", closeJob...)
	return f
}

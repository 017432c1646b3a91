package observer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
)

// Summary is one run as the index and history.json show it. Every string
// has passed the observer's redactor.
type Summary struct {
	ID          string  `json:"run_id"`
	Capability  string  `json:"capability,omitempty"`
	Status      string  `json:"status"`
	StartedAt   string  `json:"started_at,omitempty"`
	FinishedAt  string  `json:"finished_at,omitempty"`
	DurationMS  int64   `json:"duration_ms"`
	Outcome     string  `json:"outcome,omitempty"`
	FailureCode string  `json:"failure_code,omitempty"`
	Effects     string  `json:"effects"`
	DriftScore  float64 `json:"drift_score"`
	Drifted     bool    `json:"drifted"`
	// ReceiptStatus is receipt.json's status, when the run has a receipt.
	ReceiptStatus string `json:"receipt_status,omitempty"`
	ShareReady    bool   `json:"share_ready"`
	Events        int    `json:"events"`
	Screenshots   int    `json:"screenshots"`
	// Problem says what of the bundle could not be read, if anything.
	Problem string `json:"problem,omitempty"`
	URL     string `json:"url"`
}

// Effects values.
const (
	EffectsNone        = "none"
	EffectsSent        = "sent"
	EffectsUnconfirmed = "unconfirmed"
)

// StatusRunning is shown for a run with no record.json yet.
const StatusRunning = string(domain.StatusRunning)

// summary builds id's Summary from record.json and receipt.json.
func (l *Library) summary(id string, ls *listing, rep evidence.Report) (Summary, error) {
	s := Summary{ID: id, Status: StatusRunning, Effects: EffectsNone, ShareReady: rep.ShareReady,
		Events: rep.Events, Screenshots: len(ls.screenshots()), URL: "/runs/" + url.PathEscape(id)}
	rawRec, err := l.read(ls, rep, "record.json")
	if err != nil {
		return Summary{}, err
	}
	rawRcpt, err := l.read(ls, rep, "receipt.json")
	if err != nil {
		return Summary{}, err
	}
	rec, problem := decodeRecord(rawRec)
	s.Problem = problem
	if rec != nil {
		s.fromRecord(rec)
	} else if err := l.fromEvents(&s, ls, rep); err != nil {
		return Summary{}, err
	}
	rcpt, problem := decodeReceipt(rawRcpt)
	if problem != "" {
		s.Problem = strings.TrimPrefix(s.Problem+"; "+problem, "; ")
	}
	s.ReceiptStatus = receiptStatus(rcpt)
	if s.Effects == EffectsNone {
		s.Effects = receiptEffects(rcpt["effects"])
	}
	l.redactSummary(&s)
	return s, nil
}

func (s *Summary) fromRecord(rec *domain.RunRecord) {
	s.Capability, s.StartedAt, s.FinishedAt, s.DurationMS = rec.Capability, rec.StartedAt, rec.FinishedAt, rec.DurationMS
	if rec.Status != "" {
		s.Status = string(rec.Status)
	}
	s.Outcome, s.FailureCode, s.DriftScore = rec.Outcome, string(rec.FailureCode), rec.DriftScore
	s.Drifted = rec.DriftScore > 0 || slices.ContainsFunc(rec.Steps, func(st domain.StepResult) bool { return st.Drifted })
	if e := rec.Effects; e != nil {
		switch {
		case e.Unconfirmed:
			s.Effects = EffectsUnconfirmed
		case e.Sent:
			s.Effects = EffectsSent
		}
	}
}

// fromEvents fills what a run with no record yet says of itself: the
// capability of its run_started event and the time of its first event.
func (l *Library) fromEvents(s *Summary, ls *listing, rep evidence.Report) error {
	raw, err := l.read(ls, rep, "events.jsonl")
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), maxFile)
	for sc.Scan() {
		var ev evidence.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if s.StartedAt == "" {
			s.StartedAt = ev.At
		}
		if c, ok := ev.Data["capability"].(string); ok && ev.Type == (evidence.RunStarted{}).EventType() {
			s.Capability = c
			return nil
		}
	}
	return nil
}

// receiptStatus is a receipt's outcome (completed, stopped_at_gate,
// blocked_by_unknown_modal, needs_human, failed), read from "outcome" as
// internal/receipt writes it, or from "status".
func receiptStatus(rcpt map[string]any) string {
	for _, k := range []string{"outcome", "status"} {
		if v, ok := rcpt[k].(string); ok {
			return v
		}
	}
	return ""
}

// receiptEffects reads a receipt's effects leniently: an object with sent
// and unconfirmed, or a list of objects with an effect each.
func receiptEffects(v any) string {
	out := EffectsNone
	note := func(effect string, sent, unconfirmed bool) {
		switch {
		case unconfirmed || effect == string(domain.EffectSentUnconfirmed):
			out = EffectsUnconfirmed
		case (sent || effect == string(domain.EffectConfirmed)) && out == EffectsNone:
			out = EffectsSent
		}
	}
	switch e := v.(type) {
	case map[string]any:
		sent, _ := e["sent"].(bool)
		unc, _ := e["unconfirmed"].(bool)
		note("", sent, unc)
	case []any:
		for _, it := range e {
			if m, ok := it.(map[string]any); ok {
				eff, _ := m["effect"].(string)
				note(eff, false, false)
			}
		}
	}
	return out
}

func (l *Library) redactSummary(s *Summary) {
	for _, p := range []*string{&s.Capability, &s.Status, &s.StartedAt, &s.FinishedAt, &s.Outcome, &s.FailureCode, &s.ReceiptStatus, &s.Problem} {
		*p = l.red.String(*p)
	}
}

// Filter keeps the runs an index or history.json asks for. The zero value
// keeps every run.
type Filter struct {
	Status     string // a RunStatus
	Capability string // substring of the capability id@version
	Effects    string // none, sent, unconfirmed
	Drift      string // yes, no
	Share      string // yes, no
	Receipt    string // a receipt status
	Q          string // substring of run id, capability, outcome or failure code
}

var filterFields = []string{"status", "capability", "effects", "drift", "share", "receipt", "q"}

var (
	statusValues  = []string{"SUCCESS", "BUSINESS_OUTCOME", "FAILED", "NEEDS_HUMAN", "RUNNING"}
	effectsValues = []string{EffectsNone, EffectsSent, EffectsUnconfirmed}
	yesNo         = []string{"yes", "no"}
	receiptValues = []string{"completed", "stopped_at_gate", "blocked_by_unknown_modal", "needs_human", "failed"}
)

// ParseFilter reads a Filter from query parameters. An unknown parameter,
// a repeated one or a value outside a field's set is an error naming the
// field (never echoing the value).
func ParseFilter(q url.Values) (Filter, error) {
	var f Filter
	for k, vs := range q {
		if !slices.Contains(filterFields, k) {
			return Filter{}, fmt.Errorf("unknown filter %q: want one of %s", k, strings.Join(filterFields, ", "))
		}
		if len(vs) != 1 {
			return Filter{}, fmt.Errorf("filter %s: give it once", k)
		}
	}
	get := func(k string, allowed []string, upper bool) (string, error) {
		v := strings.TrimSpace(q.Get(k))
		if upper {
			v = strings.ToUpper(v)
		} else if allowed != nil {
			v = strings.ToLower(v)
		}
		if v == "" || allowed == nil || slices.Contains(allowed, v) {
			if len(v) > 200 {
				return "", fmt.Errorf("filter %s: longer than 200 characters", k)
			}
			return v, nil
		}
		return "", fmt.Errorf("filter %s: want one of %s", k, strings.Join(allowed, ", "))
	}
	var err error
	fields := []struct {
		k       string
		dst     *string
		allowed []string
		upper   bool
	}{
		{"status", &f.Status, statusValues, true}, {"capability", &f.Capability, nil, false},
		{"effects", &f.Effects, effectsValues, false}, {"drift", &f.Drift, yesNo, false},
		{"share", &f.Share, yesNo, false}, {"receipt", &f.Receipt, receiptValues, false}, {"q", &f.Q, nil, false},
	}
	for _, fd := range fields {
		if *fd.dst, err = get(fd.k, fd.allowed, fd.upper); err != nil {
			return Filter{}, err
		}
	}
	return f, nil
}

// Query is f as query parameters (empty fields left out).
func (f Filter) Query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"status": f.Status, "capability": f.Capability, "effects": f.Effects,
		"drift": f.Drift, "share": f.Share, "receipt": f.Receipt, "q": f.Q} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

func (f Filter) keep(s Summary) bool {
	yn := func(want string, got bool) bool { return want == "" || (want == "yes") == got }
	has := func(sub string, in ...string) bool {
		if sub == "" {
			return true
		}
		sub = strings.ToLower(sub)
		return slices.ContainsFunc(in, func(x string) bool { return strings.Contains(strings.ToLower(x), sub) })
	}
	return (f.Status == "" || s.Status == f.Status) &&
		has(f.Capability, s.Capability) &&
		(f.Effects == "" || s.Effects == f.Effects) &&
		yn(f.Drift, s.Drifted) && yn(f.Share, s.ShareReady) &&
		(f.Receipt == "" || s.ReceiptStatus == f.Receipt) &&
		has(f.Q, s.ID, s.Capability, s.Outcome, s.FailureCode)
}

// redacted is f with every value through the redactor, for echoing it
// back in a page's form.
func (l *Library) redacted(f Filter) Filter {
	for _, p := range []*string{&f.Status, &f.Capability, &f.Effects, &f.Drift, &f.Share, &f.Receipt, &f.Q} {
		*p = l.red.String(*p)
	}
	return f
}

package observer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
)

// Run is one served run's page: its summary, the record's steps and
// outputs as stored, the event timeline, lease changes, the receipt and
// the verify report. Every string has passed the observer's redactor.
type Run struct {
	Summary
	ContentHash string
	BaseURL     string
	Message     string
	Steps       []domain.StepResult
	Inputs      []KV
	Outputs     []KV
	Returns     []KV
	Timeline    []Entry
	Leases      []LeaseChange
	// Receipt is receipt.json, indented, when the run has one; Gate is
	// gate.json (the handoff gate a run stopped at) and GateDecision its
	// decision; Plan is plan.json, the run's action plan.
	Receipt      string
	Gate         string
	GateDecision string
	Plan         string
	Verify       evidence.Report
	// Unreferenced are screenshots no event names, shown after the timeline.
	Unreferenced []string
	// BadLines counts events.jsonl lines that are not events.
	BadLines int
}

// KV is one named value, the value as compact JSON or plain text.
type KV struct {
	Key   string
	Value string
}

// Entry is one event of the timeline.
type Entry struct {
	Seq     int
	At      string
	Type    string
	Actor   string
	Step    string
	Details []KV
	// Screenshot is the file name under screenshots/ the event names, when
	// that file is in the bundle; MissingShot names one that is not.
	Screenshot  string
	MissingShot string
	// ShotReason is why the run's evidence level kept Screenshot (its
	// screenshot_kept event's reason: output, before_elevated, …); empty
	// in a bundle written before reasons were recorded.
	ShotReason string
}

// LeaseChange is an event where who may act changed: a new lease epoch, a
// new actor, a lease or takeover event, or a dispatch the lease refused.
type LeaseChange struct {
	Seq    int
	At     string
	Actor  string
	Type   string
	Epoch  string
	Reason string
}

// shotRef matches an event's value naming a screenshot.
var shotRef = regexp.MustCompile(`^(?:screenshots/)?((?:step-[0-9]{3,6}(?:-before|-after)?|park-[0-9]{3,6}|final)\.png)$`)

// Run returns the page of run id, or errNotServed.
func (l *Library) Run(id string) (*Run, error) {
	ls, rep, err := l.open(id)
	if err != nil {
		return nil, err
	}
	s, err := l.summary(id, ls, rep)
	if err != nil {
		return nil, err
	}
	r := &Run{Summary: s, Verify: l.redactReport(rep)}
	rawRec, err := l.read(ls, rep, "record.json")
	if err != nil {
		return nil, err
	}
	if rec, _ := decodeRecord(rawRec); rec != nil {
		l.fromRecord(r, rec)
	}
	rawEv, err := l.read(ls, rep, "events.jsonl")
	if err != nil {
		return nil, err
	}
	shots := ls.screenshots()
	l.timeline(r, rawEv, shots)
	docs := []struct {
		name string
		dst  *string
	}{{"receipt.json", &r.Receipt}, {"gate.json", &r.Gate}, {"plan.json", &r.Plan}}
	for _, d := range docs {
		m, err := l.document(ls, rep, d.name)
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		out, _ := json.MarshalIndent(m, "", "  ")
		*d.dst = l.red.String(string(out))
		if dec, ok := m["decision"].(string); ok && d.name == "gate.json" {
			r.GateDecision = l.red.String(dec)
		}
	}
	return r, nil
}

// document reads the bundle's JSON document name as an object: nil when
// the run has none, or when it is not a JSON object.
func (l *Library) document(ls *listing, rep evidence.Report, name string) (map[string]any, error) {
	raw, err := l.read(ls, rep, name)
	if err != nil {
		return nil, err
	}
	m, _ := decodeReceipt(raw)
	return m, nil
}

func (l *Library) fromRecord(r *Run, rec *domain.RunRecord) {
	r.ContentHash, r.BaseURL, r.Message = l.red.String(rec.ContentHash), l.red.String(rec.BaseURL), l.red.String(rec.Message)
	r.Inputs, r.Outputs = l.kvs(rec.Inputs), l.kvs(rec.Outputs)
	for k, v := range rec.Returns {
		r.Returns = append(r.Returns, KV{Key: l.red.String(k), Value: l.red.String(v)})
	}
	slices.SortFunc(r.Returns, func(a, b KV) int { return strings.Compare(a.Key, b.Key) })
	for _, st := range rec.Steps {
		st.ID, st.Message = l.red.String(st.ID), l.red.String(st.Message)
		r.Steps = append(r.Steps, st)
	}
}

// kvs is m sorted by key, each value as plain text (strings) or JSON.
func (l *Library) kvs(m map[string]any) []KV {
	out := make([]KV, 0, len(m))
	for k, v := range m {
		out = append(out, KV{Key: l.red.String(k), Value: l.red.String(valueText(v))})
	}
	slices.SortFunc(out, func(a, b KV) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "(unprintable)"
	}
	return string(raw)
}

// timeline parses events.jsonl into r.Timeline and r.Leases, linking each
// event to the screenshot it names.
func (l *Library) timeline(r *Run, raw []byte, shots []string) {
	referenced := map[string]bool{}
	if i := bytes.LastIndexByte(raw, '\n'); r.Status == StatusRunning && i < len(raw)-1 {
		raw = raw[:i+1] // a running run's last line may be half written
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), maxFile)
	lastEpoch, lastActor := "", ""
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var ev evidence.Event
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&ev); err != nil {
			r.BadLines++
			continue
		}
		e := Entry{Seq: ev.Seq, At: l.red.String(ev.At), Type: l.red.String(ev.Type), Actor: l.red.String(string(ev.Actor)),
			Step: l.red.String(ev.StepID)}
		keys := make([]string, 0, len(ev.Data))
		for k := range ev.Data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v := valueText(ev.Data[k])
			if m := shotRef.FindStringSubmatch(v); m != nil {
				if slices.Contains(shots, m[1]) {
					e.Screenshot, referenced[m[1]] = m[1], true
				} else {
					e.MissingShot = m[1]
				}
				continue
			}
			e.Details = append(e.Details, KV{Key: l.red.String(k), Value: l.red.String(v)})
		}
		r.Timeline = append(r.Timeline, e)
		epoch := ""
		if v, ok := ev.Data["epoch"]; ok {
			epoch = l.red.String(valueText(v))
		}
		if lc, ok := leaseChange(e, epoch, lastEpoch, lastActor); ok {
			r.Leases = append(r.Leases, lc)
		}
		if epoch != "" {
			lastEpoch = epoch
		}
		if e.Actor != "" {
			lastActor = e.Actor
		}
	}
	if sc.Err() != nil {
		r.BadLines++
	}
	r.Timeline = withReasons(r.Timeline)
	for _, s := range shots {
		if !referenced[s] {
			r.Unreferenced = append(r.Unreferenced, s)
		}
	}
}

// withReasons puts each screenshot's reason (its screenshot_kept event's)
// next to every picture of it, and leaves a screenshot_kept event's own
// picture out when another event already shows that file.
func withReasons(tl []Entry) []Entry {
	reasons, shown := map[string]string{}, map[string]bool{}
	for _, e := range tl {
		if e.Type != kept || e.Screenshot == "" {
			shown[e.Screenshot] = true
			continue
		}
		for _, kv := range e.Details {
			if kv.Key == "reason" {
				reasons[e.Screenshot] = kv.Value
			}
		}
	}
	for i := range tl {
		e := &tl[i]
		e.ShotReason = reasons[e.Screenshot]
		if e.Type == kept && shown[e.Screenshot] {
			e.Details = append(e.Details, KV{Key: "screenshot", Value: e.Screenshot})
			e.Screenshot = ""
		}
	}
	return tl
}

// kept is the type of the event that says why a screenshot was kept.
var kept = evidence.ScreenshotKept{}.EventType()

// leaseChange says whether e changed who may act, and how.
func leaseChange(e Entry, epoch, lastEpoch, lastActor string) (LeaseChange, bool) {
	var why []string
	t := strings.ToLower(e.Type)
	switch {
	case strings.Contains(t, "lease") || strings.Contains(t, "takeover") || strings.Contains(t, "handback"):
		why = append(why, "lease event")
	case t == "dispatch_refused":
		why = append(why, "the lease check refused a dispatch")
	}
	switch {
	case epoch != "" && lastEpoch == "":
		why = append(why, "first lease epoch "+epoch)
	case epoch != "" && epoch != lastEpoch:
		why = append(why, fmt.Sprintf("lease epoch %s → %s", lastEpoch, epoch))
	}
	if e.Actor != "" && lastActor != "" && e.Actor != lastActor {
		why = append(why, fmt.Sprintf("actor %s → %s", lastActor, e.Actor))
	}
	if len(why) == 0 {
		return LeaseChange{}, false
	}
	return LeaseChange{Seq: e.Seq, At: e.At, Actor: e.Actor, Type: e.Type, Epoch: epoch, Reason: strings.Join(why, "; ")}, true
}

// redactReport passes the report's texts through the redactor (they name
// files and kinds, never a secret; this is a second guard).
func (l *Library) redactReport(rep evidence.Report) evidence.Report {
	out := rep
	out.Reasons = make([]string, len(rep.Reasons))
	for i, s := range rep.Reasons {
		out.Reasons[i] = l.red.String(s)
	}
	out.Files = slices.Clone(rep.Files)
	for i := range out.Files {
		out.Files[i].Path = l.red.String(out.Files[i].Path)
	}
	return out
}

// Screenshot returns the PNG screenshots/name of a served run, or
// errNotServed: for a name that is not step-NNN.png, step-NNN-before.png
// or step-NNN-after.png, a file that is not
// there or not regular, bytes that are not a PNG, bytes Verify did not
// check (under Safe), or bytes that reveal a canary.
func (l *Library) Screenshot(id, name string) ([]byte, error) {
	if !shotPattern.MatchString(name) {
		return nil, errNotServed
	}
	ls, rep, err := l.open(id)
	if err != nil {
		return nil, err
	}
	raw, err := l.read(ls, rep, "screenshots/"+name)
	if err != nil || raw == nil {
		return nil, errNotServed
	}
	if !bytes.HasPrefix(raw, []byte("\x89PNG\r\n\x1a\n")) {
		return nil, errNotServed
	}
	for _, c := range l.opts.Canaries {
		if c != "" && bytes.Contains(raw, []byte(c)) {
			return nil, errNotServed
		}
	}
	return raw, nil
}

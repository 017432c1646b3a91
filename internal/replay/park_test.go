package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/hitl/hitlstore"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
	"github.com/cuahq/cua/internal/surface/sim"
)

// operator parks runs in a broker over a real SQLite queue and, when
// act is set, plays a person on each parked session: claim, act through a
// HUMAN dispatcher, release, resume.
type operator struct {
	broker *hitl.Broker
	act    func(ctx context.Context, p runtime.Parked, d *runtime.Dispatcher) error
	parks  atomic.Int32
	errs   chan error
}

func newOperator(t *testing.T, act func(context.Context, runtime.Parked, *runtime.Dispatcher) error) *operator {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "cua.db"), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	var n atomic.Int64
	br, err := hitl.NewBroker(hitl.BrokerConfig{Queue: hitlstore.New(db), Redact: func(s string) string { return s },
		NewID: func() string { return fmt.Sprintf("w%d", n.Add(1)) }})
	if err != nil {
		t.Fatal(err)
	}
	return &operator{broker: br, act: act, errs: make(chan error, 4)}
}

func (o *operator) Park(ctx context.Context, p runtime.Parked) error {
	o.parks.Add(1)
	if o.act != nil {
		go func() { o.errs <- o.takeover(ctx, p) }()
	}
	return o.broker.Hold(ctx, p.Run.Lease, p.Holder, p.Epoch, p.Waiting)
}

func (o *operator) takeover(ctx context.Context, p runtime.Parked) error {
	id := p.Waiting.SessionID
	var st hitl.Status
	for {
		var err error
		if st, err = o.broker.Claim(ctx, id, "alice"); err == nil {
			break
		}
		select { // the session is queued a moment after Park starts
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	pol, err := policy.New(policy.Config{Profile: policy.ProfileHuman, AllowedDomains: p.Domains, EntryOrigin: p.EntryOrigin})
	if err != nil {
		return err
	}
	d, err := runtime.New(runtime.Config{Surface: p.Surface, Policy: pol, Lease: p.Run.Lease, Holder: "human:alice",
		Redactor: p.Run.Redactor, Events: p.Run.Evidence, Actor: domain.ActorHuman})
	if err != nil {
		return err
	}
	if err := o.act(ctx, p, d); err != nil {
		return err
	}
	if _, err := o.broker.Release(ctx, id, "alice", st.Epoch); err != nil {
		return err
	}
	_, err = o.broker.Resume(ctx, id, "alice")
	return err
}

// pressSubmit is the person finishing the gated transfer: an irreversible
// click they confirm.
func pressSubmit(ctx context.Context, _ runtime.Parked, d *runtime.Dispatcher) error {
	snap, err := d.Observe(ctx)
	if err != nil {
		return err
	}
	a := domain.Action{Type: domain.ActClick, StepID: "operator", Target: target("button", "Submit transfer")}
	if _, err := d.Act(ctx, snap, a, ""); domain.ErrorCode(err) != domain.CodeApprovalRequired {
		return fmt.Errorf("an unconfirmed irreversible click: %v, want APPROVAL_REQUIRED", err)
	}
	consent := &policy.Consent{By: "alice", Proposal: policy.Proposal{Role: "button", Name: "Submit transfer", Risk: domain.RiskIrreversible}}
	_, err = d.Act(ctx, snap, a, "", runtime.Consented(consent))
	return err
}

func target(role, name string) *domain.TargetDescriptor {
	return &domain.TargetDescriptor{Role: role, Name: &domain.NameMatch{Value: name}}
}

// TestParkTakeoverResume: the gated transfer parks; a person claims the
// live session, presses Submit transfer (confirming it), releases and
// resumes; the run goes on from the parked step, never sends the submit
// again, reads the confirmation and succeeds with exactly one ledger entry;
// the record tells the person's action (actor human) from the engine's.
func TestParkTakeoverResume(t *testing.T) {
	t.Parallel()
	op := newOperator(t, pressSubmit)
	b := setup(t, spec{cap: "transfer.yaml", app: func() *sim.Flow { return transferApp("TRF-0001") },
		inputs: map[string]string{"amount": "25"}})
	// The operator resumes as soon as it has acted; 60 s only bounds an
	// operator that never comes, with room for a loaded CI machine.
	b.opts.Park, b.opts.ParkTimeout = op, 60*time.Second
	rec := b.run(t)
	if err := <-op.errs; err != nil {
		t.Fatalf("operator: %v", err)
	}
	if rec.Status != domain.StatusSuccess || rec.Outputs["confirmation"] != "TRF-0001" {
		t.Fatalf("run = %s %s %q, outputs %v; want SUCCESS with TRF-0001", rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
	}
	if got := b.flow.Ledger(); !slices.Equal(got, []string{"transfer 25.00"}) {
		t.Fatalf("ledger = %q, want exactly one transfer", got)
	}
	if n := b.flow.Count("button", "Submit transfer"); n != 1 {
		t.Fatalf("Submit transfer pressed %d times, want once (by the person)", n)
	}
	var statuses []string
	for _, s := range rec.Steps {
		statuses = append(statuses, s.ID+":"+s.Status)
	}
	if want := []string{"enter_amount:ok", "submit:interrupted", "submit:landed", "read_confirmation:ok"}; !slices.Equal(statuses, want) {
		t.Fatalf("steps = %q, want %q", statuses, want)
	}
	if rec.Effects == nil || !rec.Effects.Sent || rec.Effects.Unconfirmed {
		t.Fatalf("effects = %+v, want the submit sent and confirmed", rec.Effects)
	}
	events, err := os.ReadFile(filepath.Join(b.opts.DataDir, "runs", "run-1", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var human, automation int
	for _, line := range strings.Split(strings.TrimSpace(string(events)), "\n") {
		if !strings.Contains(line, `"type":"action_dispatched"`) {
			continue
		}
		switch {
		case strings.Contains(line, `"actor":"human"`) && strings.Contains(line, "Submit transfer"):
			human++
		case strings.Contains(line, `"actor":"automation"`):
			automation++
		default:
			t.Errorf("unexpected dispatch: %s", line)
		}
	}
	if human != 1 || automation != 2 {
		t.Fatalf("dispatches: %d by the person, %d by automation; want 1 and 2 (navigate, type)", human, automation)
	}
	// What the person changed is on record: the form went, the posted
	// transfer came.
	var delta struct {
		Step string              `json:"step_id"`
		Data evidence.HumanDelta `json:"data"`
	}
	for _, line := range strings.Split(strings.TrimSpace(string(events)), "\n") {
		if strings.Contains(line, `"type":"human_delta"`) {
			if err := json.Unmarshal([]byte(line), &delta); err != nil {
				t.Fatal(err)
			}
		}
	}
	if delta.Step != "submit" || !slices.Contains(delta.Data.Removed, `button "Submit transfer"`) ||
		!slices.Contains(delta.Data.Added, `heading "Transfer posted"`) || delta.Data.AddedTotal != len(delta.Data.Added) {
		t.Fatalf("human_delta = %+v, want the form removed and the posted transfer added at step submit", delta)
	}
	validateEventLog(t, filepath.Join(b.opts.DataDir, "runs", "run-1"))
}

// TestParkTimeout: nobody comes; the run ends NEEDS_HUMAN as without
// parking, says it waited, sends nothing more, and leaves no session
// waiting in the queue.
func TestParkTimeout(t *testing.T) {
	t.Parallel()
	op := newOperator(t, nil)
	b := setup(t, spec{cap: "transfer.yaml", app: func() *sim.Flow { return transferApp("TRF-0001") },
		inputs: map[string]string{"amount": "25"}})
	b.opts.Park, b.opts.ParkTimeout = op, 200*time.Millisecond
	rec := b.run(t)
	if rec.Status != domain.StatusNeedsHuman || rec.FailureCode != domain.CodeGateReached || !strings.Contains(rec.Message, "not resumed") {
		t.Fatalf("run = %s %s %q; want NEEDS_HUMAN GATE_REACHED, not resumed", rec.Status, rec.FailureCode, rec.Message)
	}
	if op.parks.Load() != 1 || len(b.flow.Ledger()) != 0 || rec.DispatchCount != 2 {
		t.Fatalf("parks = %d, ledger %q, dispatches %d; want 1, empty, 2", op.parks.Load(), b.flow.Ledger(), rec.DispatchCount)
	}
	if rows, err := op.broker.List(t.Context()); err != nil || len(rows) != 0 {
		t.Fatalf("queue after the timeout = %+v, %v; want empty", rows, err)
	}
}

// TestResumePlanOfParkedRun: the gated transfer (run without
// --allow-irreversible) parks at submit. Before the person acts, the plan
// resumes at submit, names submit ahead as irreversible and not
// authorized, and blocks: resuming would only park at the gate again.
// After the person pressed Submit transfer, the plan skips submit,
// resumes at read_confirmation with nothing blocked; the run then
// succeeds, and a plan asked for once the run took its session back is
// refused.
func TestResumePlanOfParkedRun(t *testing.T) {
	t.Parallel()
	var parked runtime.Parked
	op := newOperator(t, func(ctx context.Context, p runtime.Parked, d *runtime.Dispatcher) error {
		parked = p
		before, err := p.Plan(ctx)
		if err != nil {
			return err
		}
		if before.ParkedAt != "submit" || before.ResumeAt != "submit" || len(before.Skip) != 0 || len(before.Ahead) != 1 ||
			before.Ahead[0].Step != "submit" || before.Ahead[0].Risk != domain.RiskIrreversible || before.Ahead[0].Authorized ||
			before.Ahead[0].Reached || len(before.Blocked) != 1 || !strings.Contains(before.Blocked[0], "gate submit") {
			return fmt.Errorf("plan before the person acted = %+v", before)
		}
		if err := pressSubmit(ctx, p, d); err != nil {
			return err
		}
		after, err := p.Plan(ctx)
		if err != nil {
			return err
		}
		if !slices.Equal(after.Skip, []string{"submit"}) || after.ResumeAt != "read_confirmation" || len(after.Blocked) != 0 || len(after.Ahead) != 0 {
			return fmt.Errorf("plan after the submit = %+v", after)
		}
		return nil
	})
	b := setup(t, spec{cap: "transfer.yaml", app: func() *sim.Flow { return transferApp("TRF-0002") },
		inputs: map[string]string{"amount": "25"}})
	b.opts.Park, b.opts.ParkTimeout = op, 60*time.Second
	rec := b.run(t)
	if err := <-op.errs; err != nil {
		t.Fatalf("operator: %v", err)
	}
	if rec.Status != domain.StatusSuccess {
		t.Fatalf("run = %s %s %q", rec.Status, rec.FailureCode, rec.Message)
	}
	if _, err := parked.Plan(t.Context()); err == nil || !strings.Contains(err.Error(), "no longer parked") {
		t.Fatalf("plan after the run went on: %v, want refused", err)
	}
}

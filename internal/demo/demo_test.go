package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

const examples = "../../examples/capabilities"

func TestCheckRecord(t *testing.T) {
	t.Parallel()
	lookup := Stage{WantStatus: domain.StatusSuccess, WantOutputs: map[string]string{"savings_balance": "1234.56", "status": "Active"}, WantDispatches: -1}
	ok := func() *domain.RunRecord {
		return &domain.RunRecord{Status: domain.StatusSuccess, DispatchCount: 7,
			Outputs: map[string]any{"savings_balance": "1234.56", "status": "Active"}}
	}
	tests := []struct {
		name  string
		stage Stage
		rec   func(*domain.RunRecord)
		want  string // a substring of the problem; "" for none
	}{
		{name: "as declared", stage: lookup, rec: func(*domain.RunRecord) {}},
		{name: "status", stage: lookup, rec: func(r *domain.RunRecord) {
			r.Status, r.FailureCode, r.Message = domain.StatusNeedsHuman, domain.CodeTargetNotFound, "no Search"
		}, want: "status NEEDS_HUMAN (TARGET_NOT_FOUND: no Search), want SUCCESS"},
		{name: "failure code", stage: Stage{WantStatus: domain.StatusFailed, WantCode: domain.CodeInputInvalid, WantDispatches: -1},
			rec: func(r *domain.RunRecord) {
				r.Status, r.FailureCode, r.Outputs = domain.StatusFailed, domain.CodeInternal, nil
			},
			want: `failure code "INTERNAL"`},
		{name: "outcome", stage: Stage{WantStatus: domain.StatusSuccess, WantOutcome: "member_not_found", WantDispatches: -1},
			rec: func(*domain.RunRecord) {}, want: `outcome "", want "member_not_found"`},
		{name: "recoveries", stage: lookup, rec: func(r *domain.RunRecord) { r.RecoveryAttempts = 2 },
			want: "recovery attempts 2, want 0"},
		{name: "any dispatch count", stage: lookup, rec: func(r *domain.RunRecord) { r.DispatchCount = 99 }},
		{name: "exact dispatch count", stage: Stage{WantStatus: domain.StatusSuccess, WantDispatches: 0},
			rec: func(*domain.RunRecord) {}, want: "dispatches 7, want 0"},
		{name: "outputs in name order", stage: lookup, rec: func(r *domain.RunRecord) {
			r.Outputs = map[string]any{"savings_balance": 1.5}
		}, want: `output savings_balance = "1.5", want "1234.56"`},
		{name: "missing output", stage: lookup, rec: func(r *domain.RunRecord) { delete(r.Outputs, "status") },
			want: `output status = "<nil>", want "Active"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := ok()
			tt.rec(rec)
			got := checkRecord(tt.stage, rec)
			if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Errorf("checkRecord = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDetail(t *testing.T) {
	t.Parallel()
	rec := &domain.RunRecord{Outcome: "member_not_found", FailureCode: domain.CodeGateReached, RecoveryAttempts: 1, DispatchCount: 8,
		DriftScore: 0.125, Outputs: map[string]any{"confirmation": "TRF-0001", "savings_balance": "0.00", "status": "Closed"}}
	want := "outcome=member_not_found code=GATE_REACHED confirmation=TRF-0001 balance=0.00 status=Closed recoveries=1 dispatches=8 drift=0.12"
	if got := detail(rec); got != want {
		t.Errorf("detail = %q, want %q", got, want)
	}
}

func TestStagesNameKnownCapabilities(t *testing.T) {
	t.Parallel()
	a, b := Stages(), Stages()
	if len(a) != 13 {
		t.Fatalf("%d stages, want 13", len(a))
	}
	a[0].Inputs["member_id"] = "changed"
	if b[0].Inputs["member_id"] != "12345" {
		t.Error("Stages shares its maps between calls")
	}
	for _, st := range b {
		if _, err := os.Stat(filepath.Join(examples, st.Capability+".yaml")); err != nil {
			t.Errorf("stage %q: %v", st.Name, err)
		}
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "no capabilities", cfg: Config{DataDir: "x"}, want: "Capabilities"},
		{name: "no data dir", cfg: Config{Capabilities: examples}, want: "DataDir"},
		{name: "discoverer without cassette", cfg: Config{Capabilities: examples, DataDir: "x", Discoverer: DiscovererFunc(nil)}, want: "Cassette"},
		{name: "capability missing", cfg: Config{Capabilities: t.TempDir(), DataDir: t.TempDir()}, want: lookupCap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, err := Run(t.Context(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run = %v, %v; want an error naming %q", rep, err, tt.want)
			}
		})
	}
}

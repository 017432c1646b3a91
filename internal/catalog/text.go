package catalog

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
)

// WriteVersions prints versions as a table: ref, status, hash, created.
func WriteVersions(w io.Writer, vs []store.Version) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CAPABILITY\tVERSION\tSTATUS\tCONTENT HASH\tADDED")
	for _, v := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.CapabilityID, v.Version, v.Status, shortHash(v.ContentHash), stamp(v.CreatedAt))
	}
	return tw.Flush()
}

// WriteDetail prints what Show found.
func WriteDetail(w io.Writer, d *Detail) error {
	v := d.Version
	fmt.Fprintf(w, "%s\nintegrity:    %s", v.Ref(), d.Integrity)
	if d.Problem != "" {
		fmt.Fprintf(w, " (%s)", d.Problem)
	}
	fmt.Fprintf(w, "\ncontent hash: %s\nadded:        %s\n\napprovals (%d):\n", v.ContentHash, stamp(v.CreatedAt), len(d.Approvals))
	now := time.Now()
	for _, a := range d.Approvals {
		fmt.Fprintf(w, "  %s  %s  by %s at %s  %s\n", a.ID, approvalState(a, now), who(a.Approver), stamp(a.CreatedAt), Describe(a))
	}
	fmt.Fprintf(w, "\nlast runs (%d):\n", len(d.Runs))
	return WriteRuns(w, d.Runs)
}

// WriteRuns prints runs as a table.
func WriteRuns(w io.Writer, rs []store.Run) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tCAPABILITY\tSTATUS\tOUTCOME\tSTARTED\tFLAGS")
	for _, r := range rs {
		outcome := r.Outcome
		if outcome == "" {
			outcome = string(r.FailureCode)
		}
		var flags []string
		if r.Eval {
			flags = append(flags, "eval")
		}
		if r.ApprovalID != "" {
			flags = append(flags, "approval="+r.ApprovalID)
		}
		if r.IdempotencyKey != "" {
			flags = append(flags, "key="+r.IdempotencyKey)
		}
		fmt.Fprintf(tw, "%s\t%s@%s\t%s\t%s\t%s\t%s\n", r.ID, r.CapabilityID, r.Version, r.Status, dash(outcome), stamp(r.StartedAt), dash(strings.Join(flags, " ")))
	}
	return tw.Flush()
}

// WriteRun prints one run of the index.
func WriteRun(w io.Writer, r store.Run) error {
	_, err := fmt.Fprintf(w, "run:          %s\ncapability:   %s@%s\ncontent hash: %s\nstatus:       %s\noutcome:      %s\nfailure:      %s\neffects:      %s\nstarted:      %s\nended:        %s\nevidence:     %s\napproval:     %s\nidempotency:  %s\neval:         %v\n",
		r.ID, r.CapabilityID, r.Version, r.ContentHash, r.Status, dash(r.Outcome), dash(string(r.FailureCode)), dash(string(r.Effects)),
		stamp(r.StartedAt), stamp(r.EndedAt), dash(r.EvidencePath), dash(r.ApprovalID), dash(r.IdempotencyKey), r.Eval)
	return err
}

// Describe says in one line what an approval covers.
func Describe(a store.Approval) string {
	var parts []string
	if a.Once {
		parts = append(parts, "once for "+pairs(a.Inputs))
	}
	for _, k := range keys(a.Bounds.Max) {
		parts = append(parts, k+"<="+a.Bounds.Max[k])
	}
	for _, k := range keys(a.Bounds.Allowed) {
		parts = append(parts, k+" in {"+strings.Join(a.Bounds.Allowed[k], ",")+"}")
	}
	for _, k := range keys(a.Bounds.Pattern) {
		parts = append(parts, k+"~/"+a.Bounds.Pattern[k]+"/")
	}
	if len(parts) == 0 {
		parts = append(parts, "any inputs")
	}
	if !a.ExpiresAt.IsZero() {
		parts = append(parts, "expires "+stamp(a.ExpiresAt))
	}
	if a.Note != "" {
		parts = append(parts, fmt.Sprintf("note %q", a.Note))
	}
	return strings.Join(parts, "; ")
}

// approvalState says whether a is usable at now: revoked, used (a one-off
// consumed), expired, or active.
func approvalState(a store.Approval, now time.Time) string {
	switch {
	case !a.RevokedAt.IsZero() && a.RevokedBy != "":
		return "revoked " + stamp(a.RevokedAt) + " by " + who(a.RevokedBy)
	case !a.RevokedAt.IsZero():
		return "revoked " + stamp(a.RevokedAt)
	case a.ConsumedBy != "":
		return "used by " + a.ConsumedBy
	case !a.ExpiresAt.IsZero() && !now.Before(a.ExpiresAt):
		return "expired " + stamp(a.ExpiresAt)
	}
	return "active"
}

func pairs(m map[string]string) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for i, k := range ks {
		ks[i] = k + "=" + m[k]
	}
	return strings.Join(ks, " ")
}

func shortHash(hash string) string {
	if len(hash) > 19 {
		return hash[:19]
	}
	return hash
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// who prints a principal as recorded; a record written before principals
// existed that is not a principal's String form (a free-text approver,
// perhaps with control characters) is printed quoted, so it can never pass
// for another line or another principal.
func who(s string) string {
	if principal.CheckString(s) == nil {
		return s
	}
	return strconv.Quote(s)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteAdded prints what adding a file did: "added REF HASH", or
// "unchanged REF HASH" when the same content was already stored.
func WriteAdded(w io.Writer, r AddResult) error {
	verb := "unchanged"
	if r.Created {
		verb = "added"
	}
	_, err := fmt.Fprintf(w, "%s %s %s\n", verb, r.Version.Ref(), r.Version.ContentHash)
	return err
}

// WriteApproved prints a new approval and what it covers.
func WriteApproved(w io.Writer, a store.Approval) error {
	_, err := fmt.Fprintf(w, "approved %s@%s %s as %s by %s: %s\n", a.CapabilityID, a.Version, a.ContentHash, a.ID, who(a.Approver), Describe(a))
	return err
}

// WriteRevoked prints a revoked approval.
func WriteRevoked(w io.Writer, a store.Approval) error {
	_, err := fmt.Fprintf(w, "revoked %s (%s@%s) at %s by %s\n", a.ID, a.CapabilityID, a.Version, a.RevokedAt.Format("2006-01-02T15:04:05Z"),
		who(dash(a.RevokedBy)))
	return err
}

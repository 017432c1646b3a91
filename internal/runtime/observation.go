package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
)

// MaxObservationSummary bounds a step's observation summary, in bytes.
const MaxObservationSummary = 400

// Bounds of an observation summary's lists.
const (
	maxSummaryHeadings = 4
	maxSummaryNodes    = 8
)

// Observation is what a step_finished records of the screen a step left,
// at every evidence level: the digest of the redacted observation and a
// short redacted summary of it.
type Observation struct {
	// SHA256 is the hex SHA-256 of the redacted snapshot's JSON, its
	// sequence number left out (ObservationDigest).
	SHA256 string
	// Summary names the screen's headings and the nodes that appeared
	// since the previous step's observation.
	Summary string
}

// ObservationDigest is the hex SHA-256 of s redacted by red
// (redact.Redactor.Snapshot) and encoded as JSON, with its sequence
// number zeroed so the same screen seen twice has the same digest. The
// redacted snapshot is returned too.
func ObservationDigest(red *redact.Redactor, s *domain.UiSnapshot) (string, *domain.UiSnapshot, error) {
	rs := red.Snapshot(s)
	rs.Seq = 0
	raw, err := json.Marshal(rs)
	if err != nil {
		return "", nil, fmt.Errorf("encode observation: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), rs, nil
}

// nodeKey names a visible, named node for a summary: role "name" (in
// frame F when it is in one); "" for a hidden or unnamed node.
func nodeKey(n *domain.Node) string {
	if n.States.Hidden || strings.TrimSpace(n.Name) == "" {
		return ""
	}
	name := strings.Join(strings.Fields(n.Name), " ")
	if len(name) > 60 {
		name = truncateUTF8(name, 60) + "…"
	}
	k := n.Role + " " + strconv.Quote(name)
	if n.Frame != "" {
		k += " in " + n.Frame
	}
	return k
}

// ObservationSummary summarizes rs, a redacted snapshot, against prev, the
// node keys of the previous step's (nil for the first): its headings and
// the nodes that appeared since, each list bounded, the whole at most
// MaxObservationSummary bytes. It returns the keys of rs for the next
// step.
func ObservationSummary(rs *domain.UiSnapshot, prev map[string]bool) (string, map[string]bool) {
	seen := make(map[string]bool, len(rs.Nodes))
	var heads, added []string
	newCount := 0
	for i := range rs.Nodes {
		n := &rs.Nodes[i]
		k := nodeKey(n)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		if n.Role == "heading" && len(heads) < maxSummaryHeadings {
			heads = append(heads, k[len("heading "):])
		}
		if prev != nil && !prev[k] {
			newCount++
			if len(added) < maxSummaryNodes {
				added = append(added, k)
			}
		}
	}
	var b strings.Builder
	b.WriteString("headings: ")
	if len(heads) == 0 {
		b.WriteString("none")
	}
	b.WriteString(strings.Join(heads, ", "))
	if prev == nil {
		fmt.Fprintf(&b, "; %d named nodes", len(seen))
	} else {
		fmt.Fprintf(&b, "; new (%d): %s", newCount, strings.Join(added, ", "))
		if newCount > len(added) {
			b.WriteString(", …")
		}
	}
	s := b.String()
	if len(s) > MaxObservationSummary {
		s = truncateUTF8(s, MaxObservationSummary-len("…")) + "…"
	}
	return s, seen
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// StepObservation digests the screen d shows after a step
// (ObservationDigest) and summarizes it against the previous step's
// (ObservationSummary), for the step's step_finished event. It is taken
// at every evidence level; a screen that cannot be read gives a zero
// Observation, logged, never fatal. Not safe for concurrent use.
func (r *Run) StepObservation(ctx context.Context, d *Dispatcher) Observation {
	if r.Evidence == nil || d == nil || ctx.Err() != nil {
		return Observation{}
	}
	snap, err := d.Observe(ctx)
	if err != nil {
		r.Logger.DebugContext(ctx, "step observation not digested", "run_id", r.ID, "error", err)
		return Observation{}
	}
	sum, rs, err := ObservationDigest(r.Redactor, snap)
	if err != nil {
		r.Logger.WarnContext(ctx, "step observation not digested", "run_id", r.ID, "error", err)
		return Observation{}
	}
	summary, keys := ObservationSummary(rs, r.observed)
	r.observed = keys
	return Observation{SHA256: sum, Summary: summary}
}

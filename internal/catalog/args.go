package catalog

import (
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// SplitAllowed turns NAME=V1,V2 values into the allowed lists of
// ApproveParams.Allowed.
func SplitAllowed(m map[string]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = strings.Split(v, ",")
	}
	return out
}

// SetFields sets the overlay fields named in set; base_url is the only one.
func (o *Overlay) SetFields(set map[string]string) error {
	for k, v := range set {
		if k != "base_url" {
			return fmt.Errorf("%s: only base_url can be set", k)
		}
		o.BaseURL = v
	}
	return nil
}

// ParseRunStatus parses a run status filter; "" means any status.
func ParseRunStatus(s string) (domain.RunStatus, error) {
	switch st := domain.RunStatus(s); st {
	case "", domain.StatusRunning, domain.StatusSuccess, domain.StatusBusinessOutcome, domain.StatusFailed, domain.StatusNeedsHuman,
		domain.StatusAbandoned:
		return st, nil
	}
	return "", fmt.Errorf("%q: want RUNNING, SUCCESS, BUSINESS_OUTCOME, FAILED, NEEDS_HUMAN or ABANDONED", s)
}

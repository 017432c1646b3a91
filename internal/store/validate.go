package store

import (
	"fmt"
	"time"
)

// Validate checks the fields AddVersion requires. Adapters call it before
// opening a transaction so both report the same errors.
func (v Version) Validate() error {
	switch {
	case v.CapabilityID == "":
		return invalid("version", "capability id")
	case v.Version == "":
		return invalid("version "+v.CapabilityID, "version")
	case v.ContentHash == "":
		return invalid("version "+v.Ref(), "content hash")
	case len(v.Body) == 0:
		return invalid("version "+v.Ref(), "body")
	case v.Status != StatusDraft && v.Status != StatusSealed:
		return fmt.Errorf("version %s: status %q is not draft or sealed: %w", v.Ref(), v.Status, ErrInvalid)
	}
	return nil
}

// Validate checks the fields AddApproval requires.
func (a Approval) Validate() error {
	switch {
	case a.ID == "":
		return invalid("approval", "id")
	case a.CapabilityID == "":
		return invalid("approval "+a.ID, "capability id")
	case a.Version == "":
		return invalid("approval "+a.ID, "version")
	case a.ContentHash == "":
		return invalid("approval "+a.ID, "content hash")
	case a.Approver == "":
		return invalid("approval "+a.ID, "approver")
	case a.Once && len(a.Inputs) == 0:
		return invalid("one-off approval "+a.ID, "inputs")
	case a.ConsumedBy != "" || !a.ConsumedAt.IsZero() || !a.RevokedAt.IsZero() || a.RevokedBy != "":
		return fmt.Errorf("approval %s: a new approval cannot be consumed or revoked: %w", a.ID, ErrInvalid)
	}
	return nil
}

// Validate checks the fields RecordRun requires.
func (r Run) Validate() error {
	switch {
	case r.ID == "":
		return invalid("run", "id")
	case r.CapabilityID == "":
		return invalid("run "+r.ID, "capability id")
	case r.ContentHash == "":
		return invalid("run "+r.ID, "content hash")
	case r.Status == "":
		return invalid("run "+r.ID, "status")
	case r.UnauthorizedDispatches < 0:
		return fmt.Errorf("run %s: unauthorized dispatches %d is negative: %w", r.ID, r.UnauthorizedDispatches, ErrInvalid)
	}
	return nil
}

// Validate checks the fields AcquireLease requires.
func (r LeaseRequest) Validate() error {
	switch {
	case r.SessionID == "":
		return invalid("lease", "session id")
	case r.Holder == "":
		return invalid("lease "+r.SessionID, "holder")
	case r.TTL <= 0:
		return fmt.Errorf("lease %s: ttl %s is not positive: %w", r.SessionID, r.TTL, ErrInvalid)
	}
	return nil
}

// Validate checks the fields EnqueueIntervention requires.
func (in Intervention) Validate() error {
	switch {
	case in.ID == "":
		return invalid("intervention", "id")
	case in.SessionID == "":
		return invalid("intervention "+in.ID, "session id")
	case in.Reason == "":
		return invalid("intervention "+in.ID, "reason")
	}
	return nil
}

// CheckConsumable returns nil when a is a one-off approval that can be
// consumed at now, else the reason: [ErrNotOneOff], [ErrApprovalConsumed]
// (naming the run), [ErrApprovalRevoked] or [ErrApprovalExpired].
func (a Approval) CheckConsumable(now time.Time) error {
	switch {
	case !a.Once:
		return fmt.Errorf("approval %s: %w", a.ID, ErrNotOneOff)
	case a.ConsumedBy != "":
		return fmt.Errorf("approval %s: used by run %s: %w", a.ID, a.ConsumedBy, ErrApprovalConsumed)
	case !a.RevokedAt.IsZero():
		return fmt.Errorf("approval %s: revoked at %s: %w", a.ID, a.RevokedAt.Format(time.RFC3339), ErrApprovalRevoked)
	case !a.ExpiresAt.IsZero() && !a.ExpiresAt.After(now):
		return fmt.Errorf("approval %s: expired at %s: %w", a.ID, a.ExpiresAt.Format(time.RFC3339), ErrApprovalExpired)
	}
	return nil
}

// NextLease computes the lease AcquireLease writes for req at now, given the
// current lease (the zero Lease when there is none): a free, expired or
// forced lease moves to req.Holder at the next epoch, the current unexpired
// holder renews at its epoch, and another unexpired holder is
// [ErrLeaseHeld]. Adapters call it inside their write transaction.
func NextLease(cur Lease, req LeaseRequest, now time.Time) (Lease, error) {
	next := Lease{SessionID: req.SessionID, Holder: req.Holder, Epoch: cur.Epoch + 1,
		ExpiresAt: Micro(now.Add(req.TTL)), UpdatedAt: Micro(now)}
	live := cur.SessionID != "" && cur.ExpiresAt.After(now)
	switch {
	case live && cur.Holder == req.Holder && !req.Force:
		next.Epoch = cur.Epoch
	case live && !req.Force:
		return Lease{}, fmt.Errorf("lease %s: held by %s at epoch %d until %s: %w",
			req.SessionID, cur.Holder, cur.Epoch, cur.ExpiresAt.Format(time.RFC3339), ErrLeaseHeld)
	}
	return next, nil
}

// Validate checks the fields ClaimJobKey and RebindJobKey require.
func (k JobKey) Validate() error {
	switch {
	case k.CapabilityID == "":
		return invalid("job key", "capability id")
	case k.Key == "":
		return invalid("job key of "+k.CapabilityID, "key")
	case k.InputsDigest == "":
		return invalid("job key "+k.Key, "inputs digest")
	case k.JobID < 0 || k.Generation < 0:
		return fmt.Errorf("job key %s: negative job id or generation: %w", k.Key, ErrInvalid)
	}
	return nil
}

// Validate checks the fields SettleIntervention requires.
func (s Settlement) Validate() error {
	switch {
	case s.ID == "":
		return invalid("settlement", "intervention id")
	case s.Verdict != VerdictLanded && s.Verdict != VerdictNotLanded:
		return fmt.Errorf("settle intervention %s: verdict %q is not landed or not_landed: %w", s.ID, s.Verdict, ErrInvalid)
	case s.By == "":
		return invalid("settle intervention "+s.ID, "by")
	case s.Release != nil && (s.Release.CapabilityID == "" || s.Release.Key == "" || s.ReleaseJobID <= 0):
		return invalid("settle intervention "+s.ID, "release key and job")
	}
	return nil
}

// Validate checks the fields AddPrincipal requires. The store does not
// judge a name's or role's spelling (the principal package does); it only
// refuses what is missing, and a new principal that is disabled or locked.
func (p PrincipalRecord) Validate() error {
	switch {
	case p.Name == "":
		return invalid("principal", "name")
	case p.Role == "":
		return invalid("principal "+p.Name, "role")
	case p.SecretHash == "":
		return invalid("principal "+p.Name, "secret hash")
	case p.CreatedBy == "":
		return invalid("principal "+p.Name, "created by")
	case !p.DisabledAt.IsZero() || !p.LockedUntil.IsZero() || p.FailedSignIns != 0:
		return fmt.Errorf("principal %s: a new principal cannot be disabled, locked or have failed sign-ins: %w", p.Name, ErrInvalid)
	}
	return nil
}

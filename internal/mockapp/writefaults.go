package mockapp

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

// Write faults: each fires on a transfer submit that would post (a POST
// /content/transfer/submit with a live, unused review token; a refused
// token never uses one up) and makes the page's answer differ from what
// the ledger (GET /_control/ledger, the system of record) holds. At most
// one fires per submit, the first armed in writeFaults order. They are
// HTML only: the state contract has no transfer screens.
const (
	// FaultPartialSave writes the entry with its amount truncated to whole
	// units (25.75 is written "25.00"; a whole amount is written as is) and
	// answers the usual Transfer Complete page with the full amount and the
	// entry's confirmation. Ledger: one entry, the truncated amount.
	FaultPartialSave = "partial_save"
	// FaultDuplicateSubmit processes the submit twice: two identical
	// entries with consecutive confirmations; the Transfer Complete page
	// names the first. Ledger: two entries.
	FaultDuplicateSubmit = "duplicate_submit"
	// FaultOptimisticThenReject answers the Transfer Complete page with a
	// confirmation number, then the core system rejects the transfer: no
	// entry is written, the token is used up (a resubmit is 409), and after
	// staleDelay (1.5 s) the page's script replaces its content with the
	// heading "Transfer Rejected" and the alert rejectText. Ledger: no
	// entry; the confirmation shown is never in it.
	FaultOptimisticThenReject = "optimistic_then_reject"
	// FaultStaleOverwrite lets another writer change the source account
	// between the review page's read and the write: the ledger gets the
	// other writer's transfer first (operator otherWriter, otherAmount out
	// of the same member's source account into the other account, its own
	// confirmation), then the operator's entry, which therefore lands
	// against a source balance otherAmount lower than any page showed. The
	// page is the usual Transfer Complete page for the operator's entry.
	// Ledger: two entries, the other writer's then the operator's.
	FaultStaleOverwrite = "stale_overwrite"
	// FaultTimeoutAfterWrite writes the entry and sends no response: the
	// request is held until the client gives up (disconnects) or
	// timeoutHold (20 s) passes, then answered 504 Gateway Timeout.
	// Ledger: one entry.
	FaultTimeoutAfterWrite = "timeout_after_write"
	// FaultLostWrite answers the Transfer Complete page with a confirmation
	// number and writes nothing; the token is used up (a resubmit is 409).
	// Ledger: no entry.
	FaultLostWrite = "lost_write"
	// FaultResetAfterWrite writes the entry, then resets the connection
	// (TCP RST, no response bytes) and leaves the review token valid once
	// more. Chromium re-sends a POST whose reused connection is reset before
	// any response, so the re-sent submit posts a second entry and its
	// Transfer Complete page is the only confirmation the operator sees.
	// Ledger: two entries (one per POST that arrived), one confirmation
	// shown.
	FaultResetAfterWrite = "reset_after_write"
)

// writeFaults are the write faults in the order a submit tries them.
var writeFaults = []string{
	FaultPartialSave,
	FaultDuplicateSubmit,
	FaultOptimisticThenReject,
	FaultStaleOverwrite,
	FaultTimeoutAfterWrite,
	FaultLostWrite,
	FaultResetAfterWrite,
}

// timeoutHold bounds how long timeout_after_write holds a response.
const timeoutHold = 20 * time.Second

// Fixture data of the write faults.
const (
	// otherWriter is the operator of stale_overwrite's concurrent entry.
	otherWriter = "OP2002"
	// otherAmount is what stale_overwrite's other writer moves, in cents.
	otherAmount = 25000
	// rejectText is the alert optimistic_then_reject's page turns into.
	rejectText = "The core system rejected this transfer. Nothing was posted."
)

// submitResult is what one submit did: the entry the page confirms (its
// Confirmation is shown even when it is not in the ledger), the transfer
// as reviewed, and the write fault that fired ("" for none).
type submitResult struct {
	shown LedgerEntry
	t     transfer
	fault string
}

// submitTransfer posts the transfer of tok as operator, applying an armed
// write fault, in one step under the lock, so a token posts at most once
// however many requests race on it (reset_after_write leaves it live for
// exactly one more). ok is false when tok is unknown or used.
func (s *Server) submitTransfer(tok, operator string) (submitResult, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.st.pending[tok]
	if !ok {
		return submitResult{}, false
	}
	res := submitResult{t: t}
	for _, f := range writeFaults {
		if s.fireLocked(f) {
			res.fault = f
			break
		}
	}
	if res.fault != FaultResetAfterWrite {
		delete(s.st.pending, tok)
	}
	switch res.fault {
	case FaultPartialSave:
		saved := t
		saved.Amount = t.Amount / 100 * 100
		res.shown = s.appendTransferLocked(saved, operator)
	case FaultDuplicateSubmit:
		res.shown = s.appendTransferLocked(t, operator)
		s.appendTransferLocked(t, operator)
	case FaultOptimisticThenReject, FaultLostWrite:
		res.shown = s.transferEntryLocked(t, operator) // numbered, never written
	case FaultStaleOverwrite:
		other := t
		other.To, other.Amount = otherAccount(t.From), otherAmount
		s.appendTransferLocked(other, otherWriter)
		res.shown = s.appendTransferLocked(t, operator)
	default:
		res.shown = s.appendTransferLocked(t, operator)
	}
	return res, true
}

// otherAccount is the account of the transfer form that is not from.
func otherAccount(from string) string {
	if from == fromAccounts[0] {
		return fromAccounts[1]
	}
	return fromAccounts[0]
}

// transferEntryLocked numbers a ledger entry for t without writing it.
// s.mu must be held.
func (s *Server) transferEntryLocked(t transfer, operator string) LedgerEntry {
	s.st.trfSeq++
	return LedgerEntry{
		Seq:          len(s.st.ledger) + 1,
		Kind:         "transfer",
		Date:         asOf,
		Confirmation: fmt.Sprintf("TRF-%04d", s.st.trfSeq),
		Member:       t.Member,
		Operator:     operator,
		From:         t.From,
		To:           t.To,
		Amount:       plainAmount(t.Amount),
	}
}

// appendTransferLocked writes t's entry to the ledger. s.mu must be held.
func (s *Server) appendTransferLocked(t transfer, operator string) LedgerEntry {
	e := s.transferEntryLocked(t, operator)
	s.st.ledger = append(s.st.ledger, e)
	return e
}

// gatewayTimeoutPage is the body timeout_after_write answers once its hold
// ends with the client still waiting.
const gatewayTimeoutPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>504 Gateway Timeout</title></head>
<body><h1>Gateway Timeout</h1><p>The core system did not answer in time.</p></body></html>
`

// holdResponse answers nothing until the client leaves or s.hold (default
// timeoutHold) passes, then 504.
func (s *Server) holdResponse(w http.ResponseWriter, r *http.Request) {
	hold := s.hold
	if hold == 0 {
		hold = timeoutHold
	}
	if !sleepContext(r.Context(), hold) {
		s.logger.Info("timeout_after_write: the client gave up")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusGatewayTimeout)
	_, _ = w.Write([]byte(gatewayTimeoutPage))
}

// resetConnection drops the request's connection with a TCP reset and no
// response bytes. A writer that cannot be hijacked aborts the handler,
// which closes the connection unanswered.
func (s *Server) resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		s.logger.Warn("reset_after_write: hijack", "err", err)
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close sends RST, not FIN
	}
	_ = conn.Close()
}

// Package mockapp serves MemberDesk, a deliberately hostile credit-union
// back-office web app that cua's browser engine, its tests and the demo run
// against. It uses the standard library only, and internal/statewire for
// the wire types of the state contract it also serves.
//
// The hostility is aimed at CSS/XPath automation: two same-origin iframes,
// controls named only by a title attribute or by the label cell of their
// table row, nested layout tables, a decoy "Search" button in the other
// frame, a confirm() dialog, injected faults, and variants that churn every
// id and class (b) or rename labels (c). The ARIA roles and accessible names
// below are a contract that capabilities target; keep them exact.
//
// # Pages (variant a)
//
//	GET  /                      title "MemberDesk"; iframe name=nav title "Navigation" src /nav,
//	                            iframe name=content title "Workspace" src /content/home
//	GET  /nav                   links (target content) "Member Search", "Open Sub-Account",
//	                            "Transfer Funds", "Document Checklist", "Pending Approvals",
//	                            "Home Branch", "Sign Off"; decoy searchbox "Search this site"
//	                            and button "Search" (GET /nav?q=)
//	GET  /content/signon        heading "Sign On"; textbox "Operator ID", textbox "Password",
//	                            button "Sign on"
//	POST /content/signon        good: cookie md_session, 303 /content/home; bad: alert
//	                            "Invalid operator ID or password" (the password is never echoed)
//	GET  /content/home          heading "Welcome", text "Signed on as OP1001"
//	GET  /content/signoff       drops the session, 303 /content/signon
//	GET  /content/search        heading "Member Search"; textbox "Member number" (title only),
//	                            button "Search", button "Clear" (reset)
//	POST /content/search        member=5 digits known: 303 /content/member/{id}; unknown: status
//	                            "Member not found"; else 400 alert "Member number must be 5 digits"
//	GET  /content/member/{id}   heading "Member Details", heading "Member {id}"; nested layout-table rows "Member number",
//	                            "Name", "Status", "Savings Balance", "As of" (11/30/2026);
//	                            34567: text "No savings account on file" instead of the savings row;
//	                            link "Transfer history" (/content/member/{id}/history);
//	                            45678: heading "Restricted Record"; unknown: 404 "Member not found";
//	                            malformed: 400 "Invalid member number"
//	GET  /content/member/{id}/history  heading "Transfer History", heading "Member {id}"; table
//	                            "Transfer history", column headers "Date", "From", "To", "Amount",
//	                            "Reference number", one row per ledger transfer of the member,
//	                            oldest first, as the ledger holds it; none: status "No transfers
//	                            on file"; link "Member details". Read-only. 45678, unknown and
//	                            malformed numbers are answered as on the member page
//	GET  /content/subaccount    heading "Open Sub-Account"; unnamed textbox/combobox/textbox in rows
//	                            "Member number", "Account type" (Savings, Checking, Certificate),
//	                            "Initial deposit"; button "Open account"
//	POST /content/subaccount    member, account_type, deposit: heading "Sub-account opened",
//	                            text "Confirmation SUB-0001"; invalid: 400 alert naming the field
//	GET  /content/transfer      heading "Transfer Funds"; textbox "Member number", combobox
//	                            "From account" (Savings, Checking), combobox "To account"
//	                            (Checking, Savings), textbox "Amount"; button "Review transfer"
//	POST /content/transfer/review  heading "Review Transfer", summary rows, hidden token,
//	                            button "Submit transfer" (form onsubmit confirm(...)), link "Cancel"
//	POST /content/transfer/submit  heading "Transfer Complete", text "Confirmation TRF-0001";
//	                            reused or unknown token: 409 alert "This transfer was already submitted"
//	POST /content/notice/ack    the notice's "Continue": clears it, 303 back
//
// The task-shape pages (a checklist to tick by name, a queue of pending
// items to approve, a notice one checklist opening in three, a field that
// wants upper case) and their shape drift are listed in shapes.go and
// shapes_drift.go. A drift variant of the lookup's pages renders the
// Navigation frame with the lookup's four links only.
//
// Form fields: signon operator, password; search member; subaccount member,
// account_type, deposit; review member, from, to, amount; submit token;
// notice ack next. Every /content/* route but sign-on and the notice
// acknowledgement redirects (303) to /content/signon without a live session.
//
// # Variants
//
// Variant b keeps every name but churns every id and class, nests wrappers
// differently, reorders the member rows and adds a footer link "Savings
// Balance history". Variant c is b with "Savings Balance" renamed "Savings
// Bal.", "Search" (the member search button) renamed "Find member" and
// "Submit transfer" renamed "Post transfer".
//
// # Control API
//
// JSON, no session, never faulted:
//
//	POST /_control/arm      {"fault": NAME, "count": N, "after": M}  N: -1 forever, 0 disarms, N>0 fires N times
//	POST /_control/variant  {"variant": "a"|"b"|"c"}
//	POST /_control/reset    clears faults, sessions, ledger, counters, notice, what the
//	                        task-shape pages saved, shape drift; variant from Options
//	GET  /_control/state    [State]
//	GET  /_control/ledger   {"entries": [LedgerEntry...]}
//	POST /_control/drift    {"kind": "benign"|"semantic"|"off", "seed": N, "change": NAME}
//	                        change: one of DriftChanges (semantic) or DriftBenignChanges (benign)
//	GET  /_control/drift    the drift variant in force and its decoy hits (see drift.go)
//	POST /_control/shapes   {"page": "checklist"|"approvals", "change": NAME} or {"change": "off"}
//	GET  /_control/shapes   the shape drift in force (see shapes_drift.go)
//
// [Client] speaks this API with a context on every call; the demo, the
// end-to-end tests and the benchmarks use it rather than raw HTTP. A
// refused control request is 400 {"error": ..., "field": ...}. The faults
// are [FaultTransientLoad], [FaultSessionTimeout], [FaultUndeclaredDialog],
// [FaultValidationError], [FaultSlow], [FaultBadGatewayAfterPost],
// [FaultSessionDropAfterSignon], [FaultDialogAfterSubmit],
// [FaultFocusSteal] and [FaultStaleResult]; "after": M lets M eligible
// requests through first. [State].Posts counts content POSTs per path.
//
// # Write faults
//
// The write faults (writefaults.go) fire on a transfer submit that would
// post and make the page disagree with the ledger, the system of record
// (GET /_control/ledger, and the Transfer History page):
//
//	fault                   the page                            the ledger after it
//	partial_save            Transfer Complete, full amount      one entry, amount truncated to whole units
//	duplicate_submit        Transfer Complete, first number     two identical entries, consecutive numbers
//	optimistic_then_reject  Transfer Complete, then (1.5 s)     no entry (the number shown is never written)
//	                        "Transfer Rejected" alert
//	stale_overwrite         Transfer Complete for its entry     OP2002's 250.00 out of the same source
//	                                                            account, then the operator's entry
//	timeout_after_write     none: held until the client leaves  one entry
//	                        or 20 s, then 504 Gateway Timeout
//	lost_write              Transfer Complete with a number     no entry
//	reset_after_write       none: TCP reset, token kept once    one entry per POST: Chromium re-sends
//	                                                            it, so two entries, one confirmation
//
// Except reset_after_write, each uses the review token up (a resubmit is
// 409). Ledger entries carry the business date ("11/30/2026").
//
// Pages rendered straight from a POST (no redirect-after-POST), so the
// browser's document came from a POST and a reload re-sends it: POST
// /content/transfer/review (Review Transfer), POST /content/transfer/submit
// (Transfer Complete), POST /content/search for an unknown member (status
// "Member not found") or a malformed one (400), and any content POST
// answered by bad_gateway_after_post (the 502 page).
//
// # Host and Origin guard
//
// Every route answers a Host that is not the server's 421 and a POST, PUT,
// PATCH or DELETE with a foreign Origin 403 (see guard.go).
//
// Nothing depends on a clock or randomness: the business date is fixture
// data, and sessions, tokens and confirmation numbers come from counters.
// A Server is safe for concurrent use by many browsers.
package mockapp

// Package heal turns a run that halted on a moved or renamed control into a
// heal proposal: a draft next version of the capability in which only
// locator fields change (a target's name, anchor, hints, ordinal, scope),
// never what the capability does (inputs, outputs, outcomes, identity
// checks, effects, risk, gates, domains, pins).
//
// A proposal moves through review: its semantic diff (a refused field
// quarantines it), an evaluation against a drift battery and a fault
// battery, an approval by a principal bound to the old and the new content
// hash, a canary of the first N runs of the approved version as the
// capability's active version (any run that is neither SUCCESS nor a
// declared outcome reverts it), and a one-command rollback. Every
// transition is stored (store.HealStore) with who made it and why.
//
// The package never reaches a model: it imports neither internal/model nor
// internal/agent (archtest rule heal-no-model), and it finds a candidate by
// deterministic rules over the halted screen only.
package heal

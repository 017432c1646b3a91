// Package record turns a person's demonstration into a capability, with no
// model: cua record opens the application in a surface session, parks it
// in the operator console (the live picture, the input relay, hit-testing,
// HUMAN-profile authorization and the sign-in gate are the console's), and
// serves a recording page beside the console's API. Every gesture the
// console dispatches reaches [Recording] (console.Config.OnGesture), which
// turns it into a semantic trace step: the node it was hit-tested to is
// described by role, accessible name, anchor, scope and ordinal
// (targeting.Synthesize, as discovery describes what the agent acted on),
// keys typed into one field fold into one type step, and a click that only
// focused a field is dropped.
//
// Values: a typed value equal to an --input value becomes that input; a
// value typed into a password field (or a field a --secret names) becomes
// {$secret: REF} and stays in memory only (it reaches the eval run through
// an in-memory secret source and is registered with the redactor); other
// literals stay literal and the recorder lists them for review.
//
// Marks: "output" (a value on the live picture: a value-independent anchor
// from targeting.SynthesizeForRead, typed text, money, date or number),
// "checkpoint" (a node that proves the goal) and "outcome" (a node whose
// text shows a business outcome). "Branch" starts another pass from the
// start (an unknown member): its gestures are not compiled, they show how
// the branch's outcome is reached, and its typed values become the inputs
// of its own eval run.
//
// Stop compiles the trace through internal/recorder (identity checks,
// preconditions, default recovery, review notes), seals it into the out
// directory and replays it at once on fresh sessions: the main pass must
// end SUCCESS, each branch BUSINESS_OUTCOME with its outcome.
//
// The surface is the port (surface.Surface with surface.Screencaster), so
// a desktop session (AT-SPI nodes, X screenshots, XTEST input) records the
// same way once it casts frames; see [Options.Kind].
package record

// Package recorder compiles a discovery (or human demonstration) trace into
// a draft capability and writes it as commented YAML for review.
//
// [Compile] turns a [domain.Trace] into a [domain.Capability] plus review
// notes: what a person must check before the draft is sealed and approved.
// The rules, in short:
//
//   - Only steps with verdict "ok" are compiled; every other step is dropped
//     with a note.
//   - A step keeps the target the discovery run synthesized and re-resolved
//     (never a bare CSS selector), else, with a note, the one its action
//     named. A step with neither is dropped with a note: a single recorded
//     node is not a snapshot to synthesize from.
//   - Step ids are the action and the target's name (or anchor text) in
//     snake_case, made unique with _2, _3 …
//   - A typed or selected literal that appears in the goal (or that the trace
//     maps to an input name) becomes a typed input, {$input: NAME}; its type
//     and pattern are generalised from the literal's shape (digits →
//     [0-9]{N}, letters → [A-Za-z]{N}, an amount → money, an ISO date →
//     date). A value typed into a password or sensitive field becomes a
//     sensitive input without example or pattern. Secret references are kept;
//     other literals are kept and noted.
//   - Identity checks: a postcondition, wait, checkpoint or outcome that
//     mentions an input's value (a heading "Member 12345" after typing 12345
//     as member_id) is kept with the value replaced by {input.member_id}
//     (a node_has_value value that is exactly the literal becomes
//     {$input: member_id}), so every run proves the screen shows the record
//     it asked for. It is left out with a note when that cannot be done: the
//     input is sensitive, the literal is no input, the value sits in a
//     regular expression or a URL pattern; and on the type or select step
//     that entered the value, whose dispatch reads the value back already.
//   - An extraction becomes an extract step filling a typed output (money,
//     date or string, inferred from the text read) with the matching
//     transform.
//   - A repeated action over table rows becomes a for_each loop: two or
//     more consecutive groups of one to three steps, the first anchored
//     row_of a different row each time, that are the same steps once the
//     row's text is replaced by {item}, fold into one loop over a new list
//     input (rows: an array of strings, max_items 10 or twice the rows
//     seen), and the groups' extractions into one array output; a note
//     asks a reviewer to check the loop and its bound.
//   - Given [Options.Others], other runs of the same workflow, a safe step
//     (not an extraction) whose target some of them never acted on is a
//     screen that appears only sometimes: it gets when: node_exists its
//     target, with a note; such a step above safe risk is only noted.
//   - The first navigation, when it comes first, is the entrypoint;
//     same-origin URLs are written relative to {base_url}.
//   - Observed postconditions become step postconditions, with a 10 s wait on
//     steps that load a page. The declared outcome, the confirmed checkpoint
//     and the prerequisites are carried over.
//   - Recovery gets a transient_load rule (502/503/504 → reload) and, for a
//     sign-on prerequisite, a session_expired rule that runs it again.
//   - Reentry: given [Options.FinalScreen], the screen the run ended on, the
//     earliest step (after any sign-on step, at or before the first step
//     entering an input, before the first extraction) whose target that
//     screen shows exactly once (and whose precondition it satisfies) is
//     proposed as reentry {step, when: node_exists target},
//     when the capability validator admits it (an identity check judged
//     from that step on, nothing unsafe skipped); a note asks a reviewer to
//     confirm it, or gives the validator's reasons for leaving it out.
//   - Escalation, policy (allowed domains and actions, step and time budgets),
//     risk (the riskiest step; irreversible steps are gated) and provenance
//     are filled in.
//
// The result is checked by marshalling it and loading it with
// capability.Parse, so a compiled capability always validates as a draft.
//
// [Marshal] writes a capability as deterministic YAML in the key order of
// the reference capabilities, with a schema modeline and the review notes as
// header comments, omitting fields equal to their defaults. The output loads
// with capability.Parse, hashes like the capability it was written from, and
// can be sealed with capability.Seal.
//
// Nothing here reads a clock, the network or the file system; the compile
// time comes from [Options.Now]. Every function is safe for concurrent use.
package recorder

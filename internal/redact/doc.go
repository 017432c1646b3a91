// Package redact removes secrets and personal data from everything cua writes
// down: logs, run records, events, screenshots, receipts, generated code and
// every prompt sent to a model (DESIGN invariant 6). App state and raw
// screenshots become evidence only after passing through here (invariant 11).
//
// A [Redactor] does two things to text:
//
//   - Literals. [Redactor.RegisterLiteral] records a secret value (a resolved
//     password, a sensitive input). Every later occurrence of it, of its
//     URL-encoded, JSON-escaped, HTML-escaped, base64 and hex forms, of it
//     with its case changed or blanks put in, and of it cut by a character
//     or two at its ends (see RegisterLiteral for the exact rules, which
//     hold for a secret of any length) is replaced by [Marker]. Literals
//     shorter than the minimum length (3 runes unless
//     [WithMinLiteralLength] says otherwise) are accepted but never matched:
//     replacing every "ab" or "12" would destroy the text around it.
//     Overlapping and nested literals are handled by replacing the union of
//     all their matches, so the longest literal always wins and no part of any
//     registered literal survives.
//
//   - Patterns. Secrets nobody registered are recognised by shape and
//     replaced by a typed marker such as "[REDACTED:card]" (see [Kind] for the
//     list, and the Kind constants for exactly what each one matches and its
//     known limits). Account numbers keep their label and last four
//     characters ("acct ****6789").
//
// [Redactor.Value] and [Redactor.JSON] apply the same to structured data and
// additionally replace the value of any key named like a credential
// (password, secret, token, api_key, authorization, cookie; see
// [IsSensitiveKey]). [NewHandler] wraps an [log/slog.Handler] so that no log
// line can carry a registered secret. [MaskPNG] blacks out the boxes of
// sensitive nodes ([SensitiveBoxes], or [Redactor.Boxes] to add nodes that
// show a secret) in a screenshot; [Redactor.Snapshot] redacts the text of a
// UI snapshot; and [MaskShape] shows a reviewer the form of a value without
// the value.
//
// Every method of a Redactor is safe for concurrent use, including
// registering literals while other goroutines redact. Redaction is linear in
// the size of its input: literals are found in one pass with an Aho-Corasick
// automaton and patterns with one hand-written scan, never with backtracking
// regular expressions.
package redact

// Package perception turns a raw observation of a surface into the
// normalised snapshot that targeting, predicates and models read.
//
// [Normalize] maps a raw [domain.UiSnapshot] (for the browser: Chromium's
// Accessibility.getFullAXTree of every frame) to a new snapshot in which
//
//   - roles are canonical lowercase ARIA-style names ([CanonicalRole]);
//   - accessible names are cleaned ([CleanName]);
//   - layout noise is dropped and its children re-parented to the nearest
//     kept ancestor (inline text boxes, line breaks, unnamed generic
//     containers, empty text, hidden nodes);
//   - nodes are in document order, frame by frame, with Index, Parent,
//     Children, Depth and a stable structural Path rewritten;
//   - every node carries its Region (enclosing named landmark, else nearest
//     preceding heading) and a Fingerprint, and the snapshot a structural
//     Fingerprint that ignores values.
//
// [Fold] is the "normalized" comparison of the resolution ladder (case
// folded, punctuation removed, whitespace collapsed); [FoldEqual] and
// [AppendFold] are its allocation-free forms. [Text] is the visible text of a
// node; [TextFoldEqual] compares it folded without building it.
//
// [ElementList] renders the compact numbered list of a normalised
// snapshot's interesting nodes that a model reads. [StableProgressKey] is
// the bounded, order-independent projection of an application's own state
// that state-driven surfaces use as their progress signal.
//
// [Synthetic] builds deterministic raw snapshots of any size for benchmarks
// and tests of this package and of its consumers.
//
// Every function is pure and safe for concurrent use; none mutates its
// input.
package perception

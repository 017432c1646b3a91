// Package perception turns a raw observation of a surface into the
// normalised snapshot that targeting, predicates and models read.
//
// [Normalize] maps a raw [domain.UiSnapshot], whose roles the adapter has
// already mapped to domain's canonical vocabulary, to a new snapshot in
// which
//
//   - roles are in canonical spelling ([CanonicalRole]: ARIA synonyms and
//     case folded); perception never translates a platform's role names
//     (Chromium's, AT-SPI's): that is each adapter's job;
//   - accessible names are cleaned ([CleanName]);
//   - noise is dropped and its children re-parented to the nearest
//     kept ancestor (unnamed generic containers, empty text, hidden nodes);
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
// input. The package must never do I/O, and never know about a surface
// adapter or a platform's role names.
package perception

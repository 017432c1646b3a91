// Package discovercmd is `cua discover`: flags, model choice and progress output around internal/pipeline, which runs explore, compile, write, seal and eval.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package discovercmd

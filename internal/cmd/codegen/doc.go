// Package codegencmd is `cua codegen`: flags, loading the capability (a
// file, or a reference resolved from the catalog) and its prerequisites,
// and writing the Playwright Test spec internal/codegen generates.
//
// It holds flags, validation and printing only, and must never translate a
// step itself or write a spec that codegen refused.
package codegencmd

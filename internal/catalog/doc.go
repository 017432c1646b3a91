// Package catalog owns what a team approves from: capability versions as
// sealed, content-addressed bytes, their approvals and the input bounds those
// cover, tenant overlays, and the semantic difference between two versions.
//
// It decides what a version is and what changed between two of them; it
// never runs a capability, never touches a surface or a model, and never
// writes a file: persistence goes through the store port.
package catalog

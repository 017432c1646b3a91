// Package migration holds the SQLite migrations.
package migration

// All lists the migrations.
var All = []string{"001_init.sql"}

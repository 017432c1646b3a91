package sqlstore

import (
	"strings"
	"time"
)

// Dialect is what differs between the databases a [DB] runs on. Queries
// and migrations are written once; a dialect fills in the rest.
type Dialect struct {
	// Name names the database: "sqlite", "postgres".
	Name string
	// Placeholder starts a numbered parameter: '$' for $1 (PostgreSQL),
	// '?' for ?1 (SQLite). Queries are written with $1…$n and rebound.
	Placeholder byte
	// Types fills the column types of the migrations.
	Types Types
	// Time encodes a non-zero time for a column of type Types.Time.
	// Decoding needs no dialect: [nullTime] reads either encoding.
	Time func(time.Time) any
	// LockRow ends a SELECT of a row that its write transaction goes on
	// to change, so that concurrent writers queue on the row: " FOR
	// UPDATE" on PostgreSQL; "" on SQLite, whose write transactions
	// (BEGIN IMMEDIATE) already exclude each other.
	LockRow string
	// MigrationLock, when set, is run first in every migration's
	// transaction, so that processes opening one new database apply each
	// migration once (a transaction-scoped advisory lock on PostgreSQL;
	// SQLite's BEGIN IMMEDIATE does that alone).
	MigrationLock string
}

// Types are the column types a migration names with {{.Time}},
// {{.BigInt}}, {{.Blob}}, {{.Serial}} and {{call .Flag "column"}}.
type Types struct {
	// Time is a point in time at microsecond precision.
	Time string
	// BigInt is a 64-bit integer.
	BigInt string
	// Blob is a byte string.
	Blob string
	// Serial is the whole definition, after the name, of a 64-bit integer
	// primary key that the database numbers in insertion order.
	Serial string
	// Flag returns the whole definition, after the name, of a boolean
	// column that is false by default.
	Flag func(column string) string
}

// SQLite is the dialect of store/sqlite (modernc.org/sqlite): times are
// integer unix microseconds, flags integers 0 or 1.
var SQLite = Dialect{
	Name:        "sqlite",
	Placeholder: '?',
	Types: Types{Time: "INTEGER", BigInt: "INTEGER", Blob: "BLOB", Serial: "INTEGER PRIMARY KEY AUTOINCREMENT", Flag: func(column string) string {
		return "INTEGER NOT NULL DEFAULT 0 CHECK (" + column + " IN (0, 1))"
	}},
	Time: func(t time.Time) any { return t.UnixMicro() },
}

// Postgres is the dialect of store/postgres (pgx through database/sql):
// times are timestamptz, flags booleans.
var Postgres = Dialect{
	Name:        "postgres",
	Placeholder: '$',
	Types: Types{Time: "TIMESTAMPTZ", BigInt: "BIGINT", Blob: "BYTEA", Serial: "BIGSERIAL PRIMARY KEY", Flag: func(string) string {
		return "BOOLEAN NOT NULL DEFAULT false"
	}},
	Time:          func(t time.Time) any { return t },
	LockRow:       " FOR UPDATE",
	MigrationLock: `SELECT pg_advisory_xact_lock(6518113)`, // 0x637561, "cua"
}

// rebind rewrites the $n parameters of q in the dialect's form. Queries
// hold no '$' but in parameters.
func (d *Dialect) rebind(q string) string {
	if d.Placeholder == '$' {
		return q
	}
	return strings.ReplaceAll(q, "$", string(d.Placeholder))
}

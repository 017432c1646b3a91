package sqlstore

import (
	"strings"
	"testing"
	"time"
)

// TestMigrationsFillEveryDialect renders every migration for both
// dialects: no template token is left, and each dialect's text holds only
// its own column types.
func TestMigrationsFillEveryDialect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d       Dialect
		foreign []string
	}{
		{SQLite, []string{"TIMESTAMPTZ", "BIGINT", "BYTEA", "BOOLEAN", "SERIAL"}},
		{Postgres, []string{"BLOB", "AUTOINCREMENT", "CHECK (once IN (0, 1))", "CHECK (eval IN (0, 1))"}},
	}
	for _, tt := range tests {
		ms, err := Migrations(tt.d)
		if err != nil || len(ms) < 7 {
			t.Fatalf("%s: %d migrations, %v", tt.d.Name, len(ms), err)
		}
		for _, m := range ms {
			if strings.Contains(m.SQL, "{{") || strings.Contains(m.SQL, "<no value>") {
				t.Errorf("%s %03d_%s: a token is left unfilled:\n%s", tt.d.Name, m.Version, m.Name, m.SQL)
			}
			for _, f := range tt.foreign {
				if strings.Contains(m.SQL, f) {
					t.Errorf("%s %03d_%s holds %q, another dialect's", tt.d.Name, m.Version, m.Name, f)
				}
			}
		}
	}
}

// TestRebind: a query written with $n runs as ?n on SQLite (reused
// numbers stay one parameter) and unchanged on PostgreSQL.
func TestRebind(t *testing.T) {
	t.Parallel()
	q := `UPDATE job_keys SET job_id = $1 WHERE key = $2 AND job_id IN (0, $1)`
	if got, want := SQLite.rebind(q), `UPDATE job_keys SET job_id = ?1 WHERE key = ?2 AND job_id IN (0, ?1)`; got != want {
		t.Errorf("SQLite rebind = %q, want %q", got, want)
	}
	if got := Postgres.rebind(q); got != q {
		t.Errorf("Postgres rebind = %q, want it unchanged", got)
	}
}

// TestNullTimeReadsBothEncodings: a time column scans from SQLite's unix
// microseconds and PostgreSQL's timestamp to the same UTC time, NULL to
// the zero time, and anything else is an error.
func TestNullTimeReadsBothEncodings(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 12, 4, 6, 0, 0, 123456000, time.UTC)
	for _, src := range []any{want.UnixMicro(), want.In(time.FixedZone("x", 3600)).Add(789 * time.Nanosecond)} {
		var n nullTime
		if err := n.Scan(src); err != nil || !n.t.Equal(want) || n.t.Location() != time.UTC {
			t.Errorf("Scan(%v) = %v, %v; want %v UTC", src, n.t, err, want)
		}
	}
	n := nullTime{t: want}
	if err := n.Scan(nil); err != nil || !n.t.IsZero() {
		t.Errorf("Scan(nil) = %v, %v; want the zero time", n.t, err)
	}
	if err := n.Scan("2026-12-04"); err == nil {
		t.Error("Scan of a string succeeded; want an error naming the type")
	}
}

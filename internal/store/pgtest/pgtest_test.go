package pgtest

import (
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStartQueryStop starts a server, checks it answers on its socket as an
// unprivileged server process with no TCP listener, and stops it.
func TestStartQueryStop(t *testing.T) {
	ctx := t.Context()
	s, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dsn := s.Fresh(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		s.Stop()
		t.Fatal(err)
	}
	var listen string
	err = conn.QueryRow(ctx, `SELECT current_setting('listen_addresses')`).Scan(&listen)
	conn.Close(ctx)
	if err != nil || listen != "" {
		t.Errorf("listen_addresses = %q, %v; want empty (Unix socket only)", listen, err)
	}
	if os.Geteuid() == 0 {
		info, err := os.Stat(s.dir + "/data")
		if err != nil {
			t.Fatal(err)
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok || s.cred == nil || st.Uid != s.cred.Uid || st.Uid == 0 {
			t.Errorf("data directory owned by uid %v; want the unprivileged postgres user", info.Sys())
		}
	}
	s.Stop()
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Fatalf("server directory %s still exists after Stop (%v)", s.dir, err)
	}
}

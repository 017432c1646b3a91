// Package pgtest starts a real, private PostgreSQL server for tests: Debian's
// postgresql binaries, a fresh data directory from initdb, a Unix socket in a
// private directory and no TCP listener, run as the unprivileged "postgres"
// user when the test runs as root, stopped with pg_ctl -m immediate and
// removed by [Server.Stop]. Each test gets its own database from
// [Server.Fresh], so tests run in parallel on one server.
//
// It owns test infrastructure only: production code must never import it,
// and it must never connect to a server it did not start, listen on a
// network address, or skip: when PostgreSQL is missing, Start returns an
// error and the caller fails (`make deps` installs it).
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Server is one running private PostgreSQL server.
type Server struct {
	bin     string // directory holding initdb, pg_ctl and postgres
	dir     string // temp root: data/, sock/, log
	cred    *syscall.Credential
	mu      sync.Mutex // serializes CREATE DATABASE
	counter atomic.Int64
}

// superuser is the role initdb creates and tests connect as.
const superuser = "cua"

// BinDir returns the directory of PostgreSQL's server binaries: the one
// holding initdb on PATH or in /usr/local/bin, else the newest
// /usr/lib/postgresql/*/bin.
func BinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	if _, err := os.Stat("/usr/local/bin/initdb"); err == nil {
		return "/usr/local/bin", nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("postgresql server binaries (initdb, pg_ctl) not found on PATH, in /usr/local/bin or /usr/lib/postgresql/*/bin; run `make deps`")
}

// version is the major version in /usr/lib/postgresql/<major>/bin.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Start initializes and starts a server. The caller must call Stop.
func Start(ctx context.Context) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tempRoot(), "cua-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{bin: bin, dir: dir}
	if err := s.start(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// tempRoot is where the server's directory goes: the "postgres" user must be
// able to reach it, which a root-only TMPDIR would not allow.
func tempRoot() string {
	if os.Geteuid() == 0 {
		return "/tmp"
	}
	return os.TempDir()
}

func (s *Server) start(ctx context.Context) error {
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("pgtest: running as root needs the unprivileged user postgres: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	for _, d := range []string{s.dir, s.sock()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		if s.cred != nil {
			if err := os.Chown(d, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
				return fmt.Errorf("pgtest: chown %s: %w", d, err)
			}
		}
	}
	data := filepath.Join(s.dir, "data")
	if err := s.run(ctx, "initdb", "-D", data, "-U", superuser, "--auth=trust", "-E", "UTF8",
		"--locale=C", "--no-sync"); err != nil {
		return err
	}
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=off -c synchronous_commit=off "+
		"-c full_page_writes=off -c max_connections=200", s.sock())
	return s.run(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "-o", opts, "start")
}

func (s *Server) sock() string { return filepath.Join(s.dir, "sock") }

// run runs one of the server binaries as the server's user.
func (s *Server) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = []string{"PATH=" + s.bin + ":/usr/bin:/bin", "LC_ALL=C"}
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("pgtest: %s: %w\n%s%s", name, err, out.Bytes(), log)
	}
	return nil
}

// Stop stops the server immediately and removes its directory.
func (s *Server) Stop() {
	if _, err := os.Stat(filepath.Join(s.dir, "data", "postmaster.pid")); err == nil {
		_ = s.run(context.Background(), "pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
	}
	_ = os.RemoveAll(s.dir)
}

// DSN returns the connection string of database db over the Unix socket.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("host=%s port=5432 user=%s dbname=%s sslmode=disable", s.sock(), superuser, db)
}

// URL is db's connection string in URL form (postgres://…), as `cua --db`
// and CUA_DB take it.
func (s *Server) URL(db string) string {
	return (&url.URL{Scheme: "postgres", User: url.User(superuser), Path: "/" + db,
		RawQuery: url.Values{"host": {s.sock()}, "port": {"5432"}, "sslmode": {"disable"}}.Encode()}).String()
}

// CreateDatabase creates an empty database and returns its DSN.
func (s *Server) CreateDatabase(ctx context.Context, name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return s.DSN(name), nil
}

// Fresh creates a new empty database for tb and returns its DSN; it fails
// tb when it cannot.
func (s *Server) Fresh(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d", s.counter.Add(1))
	dsn, err := s.CreateDatabase(tb.Context(), name)
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

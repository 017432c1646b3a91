package fsx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specials makes a directory holding a small file, a big file, a FIFO,
// symlinks to /dev/zero and to the small file, and returns their paths.
func specials(t *testing.T) (dir string, p map[string]string) {
	t.Helper()
	dir = t.TempDir()
	p = map[string]string{
		"small": filepath.Join(dir, "small"), "big": filepath.Join(dir, "big"),
		"fifo": filepath.Join(dir, "fifo"), "zero": filepath.Join(dir, "zero"), "link": filepath.Join(dir, "link"),
	}
	if err := os.WriteFile(p["small"], []byte("id: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p["big"], make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p["fifo"], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", p["zero"]); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p["small"], p["link"]); err != nil {
		t.Fatal(err)
	}
	return dir, p
}

// within runs f, failing the test if it blocks: a read that blocks on a
// FIFO or /dev/zero never returns, so any bound catches it.
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("blocked")
		return nil
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir, p := specials(t)
	cases := []struct {
		name     string
		path     string
		noFollow bool
		wantErr  error
	}{
		{"regular file", p["small"], false, nil},
		{"symlink to a regular file", p["link"], false, nil},
		{"over the cap", p["big"], false, ErrTooLarge},
		{"dev zero", "/dev/zero", false, ErrNotRegular},
		{"symlink to dev zero", p["zero"], false, ErrNotRegular},
		{"fifo", p["fifo"], false, ErrNotRegular},
		{"directory", dir, false, ErrNotRegular},
		{"no follow: regular file", p["small"], true, nil},
		{"no follow: symlink to a regular file", p["link"], true, ErrNotRegular},
		{"no follow: symlink to dev zero", p["zero"], true, ErrNotRegular},
		{"no follow: fifo", p["fifo"], true, ErrNotRegular},
		{"missing", filepath.Join(dir, "missing"), false, fs.ErrNotExist},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			read := ReadFile
			if tc.noFollow {
				read = ReadFileNoFollow
			}
			var data []byte
			err := within(t, func() (err error) { data, err = read(tc.path, 1024); return err })
			if tc.wantErr == nil {
				if err != nil || string(data) != "id: x\n" {
					t.Fatalf("got %q, %v", data, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name %s", err, tc.path)
			}
		})
	}
}

func TestOpenAppend(t *testing.T) {
	t.Parallel()
	dir, p := specials(t)
	for _, name := range []string{"zero", "fifo"} {
		err := within(t, func() error {
			f, err := OpenAppend(p[name], 0o600)
			if err == nil {
				f.Close()
			}
			return err
		})
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p[name]) {
			t.Errorf("OpenAppend(%s) = %v, want ErrNotRegular naming it", name, err)
		}
	}
	out := filepath.Join(dir, "out.jsonl")
	for _, line := range []string{"a\n", "b\n"} {
		f, err := OpenAppend(out, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	got, err := ReadFile(out, 1024)
	if err != nil || string(got) != "a\nb\n" {
		t.Fatalf("appended %q, %v", got, err)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o600 {
		t.Errorf("created with mode %v, want 0600", st.Mode().Perm())
	}
}

func TestPrepareDataFile(t *testing.T) {
	t.Parallel()
	for _, pre := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "data")
		db := filepath.Join(dir, "cua.db")
		if pre {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{db, db + "-wal"} {
				if err := os.WriteFile(f, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(f, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := PrepareDataFile(db); err != nil {
			t.Fatal(err)
		}
		want := map[string]fs.FileMode{dir: 0o700, db: 0o600}
		if pre {
			want[db+"-wal"] = 0o600
		}
		for f, m := range want {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != m {
				t.Errorf("pre-existing %v: %s has mode %v, want %v", pre, f, st.Mode().Perm(), m)
			}
		}
	}
}

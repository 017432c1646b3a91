package capability

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("id: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zeroLink := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zeroLink); err != nil {
		t.Fatal(err)
	}
	goodLink := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(small, goodLink); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		path    string
		wantErr error
	}{
		{"regular file", small, nil},
		{"symlink to a regular file", goodLink, nil},
		{"over the cap", big, ErrTooLarge},
		{"dev zero", "/dev/zero", ErrNotRegular},
		{"symlink to dev zero", zeroLink, ErrNotRegular},
		{"fifo", fifo, ErrNotRegular},
		{"directory", dir, ErrNotRegular},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan error, 1)
			go func() {
				_, err := ReadBounded(tc.path, 1024)
				done <- err
			}()
			select {
			case err := <-done:
				if tc.wantErr == nil {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.path) {
					t.Errorf("error %q does not name %s", err, tc.path)
				}
			// A read that blocks on a fifo or /dev/zero never returns: any
			// bound catches it, and a passing read never waits for it.
			case <-time.After(30 * time.Second):
				t.Fatal("ReadBounded blocked")
			}
		})
	}
}

func TestLoadRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "cap.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo} {
		if _, err := Load(p); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Load(%s) = %v, want ErrNotRegular", p, err)
		}
	}
}

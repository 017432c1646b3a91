// Package fsx is cua's one bounded reader of files (invariant 22): every
// file cua reads whose path a user, a flag or a bundle names is read here,
// as a regular file only, up to a size cap of its kind. A device such as
// /dev/zero, a FIFO, a socket or a directory (or a symlink to one) is
// refused at once, naming the file: it is checked before it is opened,
// opened non-blocking, and checked again on the open file. It also opens
// the files cua appends to and prepares its data files (0600 in a 0700
// directory).
//
// It imports only the standard library, so every package may use it
// (internal/archtest lists it as a leaf; rule bounded-read forbids
// os.ReadFile, io.ReadAll and os.Open elsewhere).
package fsx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Size caps, one per kind of file cua reads. A file over its cap is
// refused, never read in full.
const (
	// MaxCapability bounds a capability file.
	MaxCapability = 4 << 20
	// MaxApproval bounds an approval record or an inputs schema.
	MaxApproval = 1 << 20
	// MaxSecrets bounds a secrets file (--secrets FILE).
	MaxSecrets = 1 << 20
	// MaxToken bounds a token file (--token-file): one line is read.
	MaxToken = 64 << 10
	// MaxBatchInputs bounds a batch's rows (--inputs FILE).
	MaxBatchInputs = 64 << 20
	// MaxBatchResults bounds a batch's results file (--out FILE).
	MaxBatchResults = 256 << 20
	// MaxCassette bounds a model cassette (--cassette FILE).
	MaxCassette = 64 << 20
	// MaxManifest bounds a bundle's manifest.json.
	MaxManifest = 4 << 20
	// MaxBundleFile bounds any other file of an evidence bundle that is
	// read whole (events.jsonl, run.json, the files the secret scan reads).
	MaxBundleFile = 64 << 20
	// MaxRecord bounds a run record or a generated file read back.
	MaxRecord = 16 << 20
)

// ErrNotRegular is wrapped by the error for a path that is not a regular
// file (a device, a FIFO, a socket, a directory, or a symlink to one of
// those, or any symlink where symlinks are refused).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error for a file over its cap.
var ErrTooLarge = errors.New("file too large")

// ReadFile reads the regular file at path, at most limit bytes. A symlink
// is followed, and its target must be regular. A file longer than limit
// (checked on the bytes read, not only on the size the file system
// reports) is refused with ErrTooLarge. Errors name path. Safe for
// concurrent use.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path, limit)
}

// ReadFileNoFollow is ReadFile for a file inside a tree cua wrote (an
// evidence bundle): a symlink is refused too, whatever it points to.
func ReadFileNoFollow(path string, limit int64) ([]byte, error) {
	f, err := OpenNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path, limit)
}

// Open opens the regular file at path for reading, following a symlink to
// a regular file. The caller bounds what it reads (ReadAll, io.LimitReader).
func Open(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, st); err != nil {
		return nil, err
	}
	return openChecked(path, os.O_RDONLY)
}

// OpenNoFollow is Open that refuses a symlink.
func OpenNoFollow(path string) (*os.File, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, st); err != nil {
		return nil, err
	}
	return openChecked(path, os.O_RDONLY|noFollow)
}

// ReadAll reads r to its end, at most limit bytes; a longer stream is
// refused with ErrTooLarge naming name.
func ReadAll(r io.Reader, name string, limit int64) ([]byte, error) {
	return readAll(r, name, limit)
}

// OpenAppend opens the file at path for appending, creating it with mode
// perm when it is missing. An existing path must be a regular file (a
// symlink is followed to one): a device, a FIFO or a symlink to one is
// refused naming path, never written to.
func OpenAppend(path string, perm fs.FileMode) (*os.File, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Create it; O_EXCL|O_NOFOLLOW refuse a file or symlink that
		// appeared since (then try again as an existing file).
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND|noFollow, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
		if st, err = os.Stat(path); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	}
	if err := checkRegular(path, st); err != nil {
		return nil, err
	}
	return openChecked(path, os.O_WRONLY|os.O_APPEND)
}

// PrepareDataFile makes the directory of a data file (a SQLite database)
// 0700, whoever created it, and the file itself and its SQLite companions
// (-wal, -shm, -journal) 0600: it creates the file empty at 0600 when it is
// missing, so SQLite, which gives its companions the main file's mode,
// never makes them readable by others, and tightens the modes of those
// that exist.
func PrepareDataFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|noFollow|nonBlock, 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	st, err := f.Stat()
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := checkRegular(path, st); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := checkRegular(p, st); err != nil {
			return err
		}
		if st.Mode().Perm() != 0o600 {
			if err := os.Chmod(p, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

// openChecked opens path non-blocking with flag and refuses it unless the
// open file is regular (the path may have been swapped since it was
// checked).
func openChecked(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkRegular(path, st); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func readAll(r io.Reader, name string, limit int64) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
			return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", name, ErrTooLarge, st.Size(), limit)
		}
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w: more than %d bytes", name, ErrTooLarge, limit)
	}
	return data, nil
}

// checkRegular refuses st unless it is a regular file, naming path and
// what it is instead.
func checkRegular(path string, st fs.FileInfo) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	kind := "special file"
	switch {
	case m.IsDir():
		kind = "directory"
	case m&fs.ModeSymlink != 0:
		kind = "symlink"
	case m&fs.ModeNamedPipe != 0:
		kind = "FIFO"
	case m&fs.ModeSocket != 0:
		kind = "socket"
	case m&fs.ModeCharDevice != 0:
		kind = "character device"
	case m&fs.ModeDevice != 0:
		kind = "device"
	}
	return fmt.Errorf("%s: %w (a %s)", path, ErrNotRegular, kind)
}

package extra

import (
	"io"
	rd "io/ioutil"
	"os"
)

// Slurp reads a user's file whole.
func Slurp(p string) ([]byte, error) { return os.ReadFile(p) }

// Drain reads a stream whole.
func Drain(r io.Reader) ([]byte, error) { return io.ReadAll(r) }

// Bounded reads at most 1 KiB of a stream: allowed.
func Bounded(r io.Reader) ([]byte, error) { return io.ReadAll(io.LimitReader(r, 1024)) }

// Opener hands os.Open on.
var Opener = os.Open

// Legacy reads through ioutil under another name.
func Legacy(p string) ([]byte, error) { return rd.ReadFile(p) }

// Write opens a file to write: allowed.
func Write(p string) (*os.File, error) { return os.OpenFile(p, os.O_WRONLY, 0o600) }

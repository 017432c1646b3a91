// Package fsx is the one reader: it may read files.
package fsx

import (
	"io"
	"os"
)

// Read reads p whole.
func Read(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

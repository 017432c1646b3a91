//go:build !unix

package fsx

// Without these flags the Lstat and Stat checks before and after open
// still refuse symlinks and non-regular files.
const (
	noFollow = 0
	nonBlock = 0
)

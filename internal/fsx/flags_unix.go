//go:build unix

package fsx

import "syscall"

const (
	// noFollow makes opening a symlink fail (ELOOP).
	noFollow = syscall.O_NOFOLLOW
	// nonBlock keeps open from waiting for a FIFO's other end.
	nonBlock = syscall.O_NONBLOCK
)

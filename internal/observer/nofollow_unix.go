//go:build unix

package observer

import "syscall"

// noFollow makes opening a file that is a symlink fail.
const noFollow = syscall.O_NOFOLLOW

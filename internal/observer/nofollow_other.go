//go:build !unix

package observer

// noFollow is unavailable here; the listing's Lstat already refuses
// symlinks.
const noFollow = 0

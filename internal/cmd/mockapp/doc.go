// Package mockappcmd is `cua mockapp`: serving MemberDesk (internal/mockapp) on a loopback address for trying cua by hand.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package mockappcmd

package capability

import "github.com/cuahq/cua/internal/fsx"

// Size caps of the files cua reads, kept here for callers that read
// capability-related files; internal/fsx holds every kind's cap.
const (
	// MaxFileSize bounds a capability file.
	MaxFileSize = fsx.MaxCapability
	// MaxApprovalSize bounds an approval record (--approval FILE).
	MaxApprovalSize = fsx.MaxApproval
	// MaxSecretsSize bounds a secrets file (--secrets FILE).
	MaxSecretsSize = fsx.MaxSecrets
)

// ErrNotRegular is wrapped by ReadBounded's error for a path that is not a
// regular file (a device such as /dev/zero, a FIFO, a socket, a directory,
// or a symlink to one of those). It is fsx.ErrNotRegular.
var ErrNotRegular = fsx.ErrNotRegular

// ErrTooLarge is wrapped by ReadBounded's error for a file over its cap. It
// is fsx.ErrTooLarge.
var ErrTooLarge = fsx.ErrTooLarge

// ReadBounded reads the regular file at path, at most limit bytes, through
// cua's one bounded reader (fsx.ReadFile): anything that is not a regular
// file is refused at once naming path, and a file over limit is refused
// with ErrTooLarge. Safe for concurrent use.
func ReadBounded(path string, limit int64) ([]byte, error) {
	return fsx.ReadFile(path, limit)
}

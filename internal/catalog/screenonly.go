package catalog

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// screenOnlyNotePrefix starts the part of an approval's note that records
// an accepted screen-only write.
const screenOnlyNotePrefix = "effects screen-only: accepted: "

// screenOnlyNote returns note with the approver's acceptance of cp's
// screen-only writes (issue 26: contracts are expected) recorded. It
// refuses a capability with an irreversible write no effect contract
// covers unless accept gives a reason, a blank reason, and an acceptance of
// a capability whose every write has a contract.
func screenOnlyNote(cp *domain.Capability, accept, note string) (string, error) {
	reason := strings.TrimSpace(accept)
	if accept != "" && reason == "" {
		return "", errors.New("--accept-screen-only needs a reason")
	}
	writes := capability.ScreenOnlyWrites(cp)
	switch {
	case len(writes) > 0 && reason == "":
		names := make([]string, len(writes))
		for i, w := range writes {
			names[i] = w.String()
		}
		return "", fmt.Errorf("%s has an irreversible write only its screen proves (%s): "+
			"add an effect contract (effects: record_written with a read-back) to a step of it, "+
			"or accept it with --accept-screen-only REASON", cp.Ref(), strings.Join(names, "; "))
	case len(writes) == 0 && reason != "":
		return "", fmt.Errorf("--accept-screen-only: every irreversible step of %s has an effect contract (or it has none); there is nothing to accept", cp.Ref())
	case len(writes) == 0:
		return note, nil
	}
	if note == "" {
		return screenOnlyNotePrefix + reason, nil
	}
	return note + "; " + screenOnlyNotePrefix + reason, nil
}

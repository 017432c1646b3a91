package runscmd

import _ "embed"

//go:embed runs.txt
var helpRuns string

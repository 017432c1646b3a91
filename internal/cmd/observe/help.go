package observecmd

import _ "embed"

//go:embed observe.txt
var helpObserve string

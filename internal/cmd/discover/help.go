package discovercmd

import _ "embed"

//go:embed discover.txt
var helpDiscover string

package secretscmd

import _ "embed"

//go:embed scan.txt
var helpScan string

package democmd

import _ "embed"

//go:embed demo.txt
var helpDemo string

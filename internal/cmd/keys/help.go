package keyscmd

import _ "embed"

//go:embed keys.txt
var helpKeys string

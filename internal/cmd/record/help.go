package recordcmd

import _ "embed"

//go:embed record.txt
var helpRecord string

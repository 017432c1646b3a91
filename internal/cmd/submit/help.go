package submitcmd

import _ "embed"

//go:embed submit.txt
var helpSubmit string

package healcmd

import _ "embed"

//go:embed heal.txt
var helpHeal string

package mockappcmd

import _ "embed"

//go:embed mockapp.txt
var helpMockapp string

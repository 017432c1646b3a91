package catalogcmd

import _ "embed"

//go:embed catalog.txt
var helpCatalog string

package userscmd

import _ "embed"

//go:embed users.txt
var helpUsers string

package verifycmd

import _ "embed"

//go:embed verify.txt
var helpVerify string

package servecmd

import _ "embed"

//go:embed serve.txt
var helpServe string

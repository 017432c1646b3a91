package codegencmd

import _ "embed"

//go:embed codegen.txt
var helpCodegen string

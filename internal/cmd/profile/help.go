package profilecmd

import _ "embed"

//go:embed profile.txt
var helpProfile string

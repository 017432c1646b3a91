package workercmd

import _ "embed"

//go:embed worker.txt
var helpWorker string

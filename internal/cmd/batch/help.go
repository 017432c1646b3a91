package batchcmd

import _ "embed"

//go:embed batch.txt
var helpBatch string

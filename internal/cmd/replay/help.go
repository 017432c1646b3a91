package replaycmd

import _ "embed"

//go:embed replay.txt
var helpReplay string

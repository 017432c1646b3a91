package mcpcmd

import _ "embed"

//go:embed mcp.txt
var helpMCP string

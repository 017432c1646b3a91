package capabilitycmd

import _ "embed"

//go:embed hash.txt
var helpHash string

//go:embed seal.txt
var helpSeal string

//go:embed validate.txt
var helpValidate string

//go:embed lint.txt
var helpLint string

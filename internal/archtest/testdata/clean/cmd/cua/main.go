// Cua runs capabilities.
package main

import (
	"context"
	"os"

	"example.com/clean/internal/cli"
)

func main() { os.Exit(cli.Main(context.Background(), os.Args[1:])) }

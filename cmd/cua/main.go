// Command cua compiles UI workflows into capabilities and replays them.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/cuahq/cua/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.System())
	stop()
	os.Exit(code)
}

// Command cua compiles UI workflows into capabilities and replays them.
//
// CUA_CPUPROFILE=FILE writes a Go CPU profile of the whole command to FILE
// ("%p" in it becomes the process id, for a bench that starts many); read
// it with go tool pprof.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/cuahq/cua/internal/cli"
)

func main() {
	stopProfile := profile(os.Getenv("CUA_CPUPROFILE"))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.System())
	stop()
	stopProfile()
	os.Exit(code)
}

// profile starts a CPU profile into path ("" for none) and returns what
// ends it. A profile that cannot be written is reported, never fatal.
func profile(path string) func() {
	if path == "" {
		return func() {}
	}
	path = strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid()))
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cua: CUA_CPUPROFILE %s: %v\n", path, err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "cua: CUA_CPUPROFILE %s: %v\n", path, err)
		}
	}
}

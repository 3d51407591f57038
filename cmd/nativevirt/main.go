// Command nativevirt controls virtual machines: start, stop, restart, migrate, pause, unpause,
// softreboot, console and vnc. Installed (or linked) as kubectl-nativevirt it is the kubectl
// plugin `kubectl nativevirt`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/nativevirt/nativevirt/pkg/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := cli.NewCommand(os.Args[0], cli.StdStreams())
	if err := cmd.ExecuteContext(ctx); err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "error:", err)
		stop()
		os.Exit(1)
	}
}

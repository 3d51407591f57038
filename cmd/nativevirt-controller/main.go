// Command nativevirt-controller runs NativeVirt's controllers: VM → VMI → launcher pod, replica
// sets and node heartbeats, under leader election.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/nativevirt/nativevirt/pkg/controllers/app"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	os.Exit(cli.Run(app.NewCommand(ctx)))
}

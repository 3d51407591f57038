// Command nativevirt-handler is the NativeVirt node agent (one per node, a DaemonSet).
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/nativevirt/nativevirt/pkg/node/app"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	os.Exit(cli.Run(app.NewCommand(ctx)))
}

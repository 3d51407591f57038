// Command etcd is etcd's own server (go.etcd.io/etcd/server/v3/etcdmain, the release's main),
// built by hack/images/build-etcd.sh into localhost/etcd:dev for the HA installation of the
// local cluster (artifacts/local/ha: the production overlay's three-member etcd). Not part of the
// NativeVirt module: a module of its own, like hack/tools/coredns, so that etcd's server
// dependencies never enter NativeVirt's go.mod. Its version is the one nativevirt-apiserver
// embeds (go.mod) and the production overlay names (gcr.io/etcd-development/etcd).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}

// Command coredns is CoreDNS (github.com/coredns/coredns) with the plugins the local cluster's
// Corefile uses (artifacts/cluster/coredns.yaml), built by hack/images/build-coredns.sh into
// localhost/coredns:dev. Not part of the NativeVirt module: a module of its own, like
// hack/tools/k8s, so that CoreDNS's dependencies never enter NativeVirt's go.mod.
//
// Upstream's main package links every plugin (the cloud DNS providers' SDKs among them); this
// one links a cluster DNS server's: the kubeadm Corefile's plugins, in CoreDNS's own order.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

// directives are the linked plugins in the order of CoreDNS's core/dnsserver/zdirectives.go
// (the order a request passes them).
var directives = []string{
	"reload",
	"ready",
	"health",
	"prometheus",
	"errors",
	"log",
	"loadbalance",
	"cache",
	"kubernetes",
	"loop",
	"forward",
}

func main() {
	dnsserver.Directives = directives
	coremain.Run()
}

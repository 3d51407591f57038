//go:build tools

// Package tools pins rancher's local-path-provisioner, the local cluster's dynamic storage
// provisioner, which hack/images/build-local-path-provisioner.sh builds into
// localhost/local-path-provisioner:dev. A module of its own, like hack/tools/k8s, so that its
// dependencies (an older client-go among them) never enter NativeVirt's go.mod.
package tools

import (
	_ "github.com/rancher/local-path-provisioner"
)

#!/usr/bin/env bash
# Starts the local single-node Kubernetes that `make run` and the e2e tests deploy NativeVirt
# into: etcd, kube-apiserver, containerd + runc + CNI bridge, kube-controller-manager,
# kube-scheduler and a kubelet, as plain processes of this machine (root needed).
#
#   hack/cluster/up.sh            # or: make cluster-up
#   export KUBECONFIG=$PWD/_output/local/kubeconfig
#
# Idempotent: while the cluster is up it reports "already up"; after a partial failure it
# starts what is missing. State lives in _output/local (NV_LOCAL_DIR), runtime state in
# /run/nativevirt; hack/cluster/down.sh stops everything (WIPE=1 also deletes the state).
# Networking: pods sit on bridge nv0 (10.88.0.0/16, no route out of the machine) and reach
# kube-apiserver at 10.88.0.1:6443; every other listener is on 127.0.0.1.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
source "$HERE/pki.sh"
source "$HERE/control-plane.sh"
source "$HERE/node.sh"

[[ $(id -u) -eq 0 ]] || nv_die "the local cluster needs root (bridge, containerd, kubelet)"

if nv_cluster_up; then
	nv_log "already up: $NV_API_URL (export KUBECONFIG=$NV_KUBECONFIG)"
	exit 0
fi

nv_step "packages"
"$NV_ROOT/hack/install-deps.sh" cluster images | sed 's/^/  /'
nv_step "kubernetes binaries"
NV_BIN_DIR=$NV_BIN "$NV_ROOT/hack/build-k8s.sh" | sed 's/^/  /'
nv_step "network (bridge $NV_BRIDGE)"
nv_network_up
nv_step "pki, tokens, kubeconfigs"
nv_pki_ensure
nv_step "etcd"
nv_etcd_up
nv_step "kube-apiserver"
nv_apiserver_up
nv_step "containerd"
nv_containerd_up
nv_step "pause image"
nv_pause_image
nv_step "controller-manager, scheduler"
nv_controllers_up
nv_step "kubelet"
nv_kubelet_up
nv_step "node ready"
nv_node_ready
nv_step_report
cat <<EOF
local cluster up: $NV_API_URL, node $NV_NODE_NAME
  export KUBECONFIG=$NV_KUBECONFIG PATH=$NV_BIN:\$PATH
  kubectl get nodes,pods -A
  test users: ${NV_TEST_USERS[*]} (kubeconfigs in $NV_KUBECONFIGS)
  logs: $NV_LOGS; stop: hack/cluster/down.sh (WIPE=1 to delete state)
EOF

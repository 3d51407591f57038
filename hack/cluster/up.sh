#!/usr/bin/env bash
# Starts the local Kubernetes that `make run` and the e2e tests deploy NativeVirt into: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler and NV_NODES nodes (default 1), each a
# containerd + runc + CNI bridge and a kubelet, and the machine's kube-proxy, as plain processes
# of this machine (root needed); then CoreDNS (kube-dns) and local-path-provisioner (the default
# StorageClass) as pods (hack/cluster/addons.sh).
#
#   hack/cluster/up.sh                 # or: make cluster-up
#   NV_NODES=2 hack/cluster/up.sh      # or: make cluster-up NODES=2
#   export KUBECONFIG=$PWD/_output/local/kubeconfig
#
# Idempotent: while the cluster is up it reports "already up"; after a partial failure, or with
# more nodes than run, it starts what is missing. Node objects of nodes that no longer run (an
# earlier cluster had more) are deleted. State lives in _output/local (NV_LOCAL_DIR), runtime
# state in /run/nativevirt; hack/cluster/down.sh stops everything (WIPE=1 also deletes the state).
# Networking: pods sit on bridge nv0 (10.88.0.0/16, no route out of the machine) and reach
# kube-apiserver at 10.88.0.1:6443 or 10.96.0.1:443; Services (10.96.0.0/24) through kube-proxy,
# names through 10.96.0.10; node I's kubelet listens on 10.88.0.(1+I); the rest of the control
# plane listens on 127.0.0.1. Names, addresses and paths per node: hack/cluster/lib.sh.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
source "$HERE/pki.sh"
source "$HERE/control-plane.sh"
source "$HERE/node.sh"
source "$HERE/addons.sh"
source "$HERE/multus.sh"

[[ $(id -u) -eq 0 ]] || nv_die "the local cluster needs root (bridge, containerd, kubelet)"
nv_check_nodes
nv_check_disk
# A cluster started before nodes had names of their own (processes "kubelet", "containerd").
if nv_running kubelet || nv_running containerd; then
	nv_die "a cluster of the earlier single-node layout runs from $NV_LOCAL_DIR: stop it first (hack/cluster/down.sh)"
fi

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
if [[ $NV_TOKENS_ADDED == 1 ]] && nv_running kube-apiserver; then
	nv_log "new identities in the token file: restarting kube-apiserver"
	nv_stop kube-apiserver
fi
nv_step "etcd"
nv_etcd_up
nv_step "kube-apiserver"
nv_apiserver_up
nv_forget_stale_nodes
nv_step "multus"
nv_multus_up
nv_step "containerd ($NV_NODES)"
nv_nodes_mount
for ((i = 1; i <= NV_NODES; i++)); do
	nv_node "$i"
	nv_containerd_up
done
nv_step "images"
nv_pause_image
nv_images_like_first_node
nv_step "controller-manager, scheduler"
nv_controllers_up
nv_step "kubelets ($NV_NODES)"
for ((i = 1; i <= NV_NODES; i++)); do
	nv_node "$i"
	nv_kubelet_up
done
nv_step "nodes ready"
for ((i = 1; i <= NV_NODES; i++)); do
	nv_node "$i"
	nv_node_ready
done
nv_default_namespace_ready
nv_step "kube-proxy"
nv_kube_proxy_up
nv_step "cluster DNS and storage"
nv_addons_up
nv_step_report
nodes=""
for ((i = 1; i <= NV_NODES; i++)); do
	nv_node "$i"
	# shellcheck disable=SC2154 # set by nv_node (lib.sh).
	nodes+="${nodes:+, }$nv_n_name ($nv_n_ip)"
done
cat <<EOF
local cluster up: $NV_API_URL, nodes: $nodes
  export KUBECONFIG=$NV_KUBECONFIG PATH=$NV_BIN:\$PATH
  kubectl get nodes,pods -A -o wide
  test users: ${NV_TEST_USERS[*]} (kubeconfigs in $NV_KUBECONFIGS)
  logs: $NV_LOGS; stop: hack/cluster/down.sh (WIPE=1 to delete state)
EOF

#!/usr/bin/env bash
# Runs a node's kubelet in the mount namespace that hack/cluster/node.sh starts it in
# (unshare --mount --propagation unchanged): the kubelet's hard-coded device plugin directory
# becomes the node's own, then the kubelet replaces this script.
#
#   kubelet-ns.sh NODE_DEVICE_PLUGIN_DIR DEVICE_PLUGIN_DIR KUBELET [ARG...]
#
# Two kubelets sharing /var/lib/kubelet/device-plugins would each remove the other's
# registration socket and plugin sockets at start. The bind mount stays in this namespace: the
# mount holding DEVICE_PLUGIN_DIR stops propagating to the host here (under systemd / is a
# shared mount). The nodes' directory is a shared mount of its own (nv_nodes_mount), untouched:
# the pod volumes the kubelet mounts there still reach containerd in the host's namespace.
set -euo pipefail
[[ $# -ge 3 ]] || { sed -n '6p' "$0" >&2; exit 2; }
node_dir=$1 dir=$2
shift 2
mount --make-slave "$(findmnt -n -o TARGET -T "$dir")"
mount --bind "$node_dir" "$dir"
exec "$@"

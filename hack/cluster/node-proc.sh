#!/usr/bin/env bash
# Starts one process of node I of the running local cluster again, the way up.sh starts it, after
# it stopped or was killed (the fault tests of test/faults kill them by PID): its containerd, or
# its kubelet (then waits until the node is Ready again). A no-op when the process runs.
#
#   hack/cluster/node-proc.sh I containerd|kubelet
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
source "$HERE/pki.sh"
source "$HERE/node.sh"
source "$HERE/multus.sh"

[[ $# -eq 2 && $1 =~ ^[1-9][0-9]*$ ]] || { sed -n '6p' "$0" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || nv_die "starting a node's processes needs root"
nv_node "$1"
case $2 in
containerd)
	nv_containerd_up
	;;
kubelet)
	nv_kubelet_up
	nv_node_ready
	;;
*)
	sed -n '6p' "$0" >&2
	exit 2
	;;
esac

#!/usr/bin/env bash
# Imports an image tarball (hack/images/mkimage.sh, `docker save`) into the local cluster's
# private containerd, in the namespace the kubelet's CRI uses, so that pods with
# imagePullPolicy Never/IfNotPresent run it without a registry.
#
#   hack/images/import.sh TAR [TAR...]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
if [[ $# -eq 0 ]]; then
	sed -n '6p' "${BASH_SOURCE[0]}" >&2
	exit 2
fi
[[ -S $NV_CONTAINERD_SOCK ]] || nv_die "containerd of the local cluster is not running ($NV_CONTAINERD_SOCK); run hack/cluster/up.sh"
for tar in "$@"; do
	nv_ctr images import "$tar" | sed 's/^/import: /'
done

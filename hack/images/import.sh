#!/usr/bin/env bash
# Imports an image tarball (hack/images/mkimage.sh, `docker save`) into the private containerd of
# every node of the local cluster that runs, in the namespace the kubelet's CRI uses, so that
# pods with imagePullPolicy Never/IfNotPresent run it without a registry on whichever node.
#
#   hack/images/import.sh TAR [TAR...]
#
# A tarball already imported into a node as it is (same sha256, every image it names still
# present in that containerd) is skipped there: make run and hack/deploy-local.sh import the same
# images each time. The nodes import in parallel.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
if [[ $# -eq 0 ]]; then
	sed -n '6p' "${BASH_SOURCE[0]}" >&2
	exit 2
fi
socks=$(nv_containerd_socks)
[[ -n $socks ]] || nv_die "no containerd of the local cluster is running (under $NV_RUN_DIR); run hack/cluster/up.sh"

declare -A sums=() refs=()
for tar in "$@"; do
	sums[$tar]=$(sha256sum "$tar" | cut -c1-64)
	refs[$tar]=$(tar -xOf "$tar" manifest.json 2>/dev/null | grep -o '"RepoTags":\[[^]]*\]' | sed 's/^"RepoTags":\[//; s/\]$//' | tr ',' '\n' | tr -d '"' || true)
done

# import_node SOCKET TAR...: the tarballs into the containerd at SOCKET (of node <dir name>).
import_node() {
	local sock=$1 node stamps present tar stamp ref missing
	shift
	node=$(basename "$(dirname "$sock")")
	# Beside the node's containerd state, so that wiping that state forgets the imports too.
	stamps=$NV_NODES_DIR/$node/containerd/imported
	mkdir -p "$stamps"
	present=$(nv_ctr_at "$sock" images ls -q)
	for tar in "$@"; do
		stamp=$stamps/$(basename "$tar").sha256
		if [[ -f $stamp && $(<"$stamp") == "${sums[$tar]}" ]]; then
			missing=0
			for ref in ${refs[$tar]}; do
				grep -qxF "$ref" <<<"$present" || missing=1
			done
			if [[ -n ${refs[$tar]} && $missing == 0 ]]; then
				echo "import: $(basename "$tar") already imported on $node (${refs[$tar]//$'\n'/ }))"
				continue
			fi
		fi
		rm -f "$stamp"
		nv_ctr_at "$sock" images import "$tar" | sed "s/^/import ($node): /"
		echo "${sums[$tar]}" >"$stamp"
	done
}

workers=()
for sock in $socks; do
	import_node "$sock" "$@" &
	workers+=("$!")
done
rc=0
for pid in "${workers[@]}"; do
	wait "$pid" || rc=1
done
exit $rc

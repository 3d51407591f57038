#!/usr/bin/env bash
# Imports an image tarball (hack/images/mkimage.sh, `docker save`) into the private containerd of
# every node of the local cluster that runs, in the namespace the kubelet's CRI uses, so that
# pods with imagePullPolicy Never/IfNotPresent run it without a registry on whichever node.
#
#   hack/images/import.sh TAR [TAR...]
#
# A tarball already imported into a node as it is (same sha256, every image it names still
# present in that containerd) is skipped there: make run and hack/deploy-local.sh import the same
# images each time.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
if [[ $# -eq 0 ]]; then
	sed -n '6p' "${BASH_SOURCE[0]}" >&2
	exit 2
fi
socks=$(nv_containerd_socks)
[[ -n $socks ]] || nv_die "no containerd of the local cluster is running (under $NV_RUN_DIR); run hack/cluster/up.sh"
for sock in $socks; do
	node=$(basename "$(dirname "$sock")")
	# Beside the node's containerd state, so that wiping that state forgets the imports too.
	stamps=$NV_NODES_DIR/$node/containerd/imported
	mkdir -p "$stamps"
	present=$(nv_ctr_at "$sock" images ls -q)
	for tar in "$@"; do
		stamp=$stamps/$(basename "$tar").sha256
		sum=$(sha256sum "$tar" | cut -c1-64)
		if [[ -f $stamp && $(<"$stamp") == "$sum" ]]; then
			refs=$(tar -xOf "$tar" manifest.json 2>/dev/null | grep -o '"RepoTags":\[[^]]*\]' | sed 's/^"RepoTags":\[//; s/\]$//' | tr ',' '\n' | tr -d '"' || true)
			missing=0
			for ref in $refs; do
				grep -qxF "$ref" <<<"$present" || missing=1
			done
			if [[ -n $refs && $missing == 0 ]]; then
				echo "import: $(basename "$tar") already imported on $node ($(echo $refs))"
				continue
			fi
		fi
		rm -f "$stamp"
		nv_ctr_at "$sock" images import "$tar" | sed "s/^/import ($node): /"
		echo "$sum" >"$stamp"
	done
done

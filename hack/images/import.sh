#!/usr/bin/env bash
# Imports an image tarball (hack/images/mkimage.sh, `docker save`) into the local cluster's
# private containerd, in the namespace the kubelet's CRI uses, so that pods with
# imagePullPolicy Never/IfNotPresent run it without a registry.
#
#   hack/images/import.sh TAR [TAR...]
#
# A tarball already imported as it is (same sha256, every image it names still present in
# containerd) is skipped: make run and hack/deploy-local.sh import the same images each time.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
if [[ $# -eq 0 ]]; then
	sed -n '6p' "${BASH_SOURCE[0]}" >&2
	exit 2
fi
[[ -S $NV_CONTAINERD_SOCK ]] || nv_die "containerd of the local cluster is not running ($NV_CONTAINERD_SOCK); run hack/cluster/up.sh"
# Beside containerd's own state, so that wiping that state forgets the imports too.
stamps=$NV_LOCAL_DIR/containerd/imported
mkdir -p "$stamps"
for tar in "$@"; do
	stamp=$stamps/$(basename "$tar").sha256
	sum=$(sha256sum "$tar" | cut -c1-64)
	if [[ -f $stamp && $(<"$stamp") == "$sum" ]]; then
		refs=$(tar -xOf "$tar" manifest.json 2>/dev/null | grep -o '"RepoTags":\[[^]]*\]' | sed 's/^"RepoTags":\[//; s/\]$//' | tr ',' '\n' | tr -d '"' || true)
		present=$(nv_ctr images ls -q)
		missing=0
		for ref in $refs; do
			grep -qxF "$ref" <<<"$present" || missing=1
		done
		if [[ -n $refs && $missing == 0 ]]; then
			echo "import: $(basename "$tar") already imported ($(echo $refs))"
			continue
		fi
	fi
	rm -f "$stamp"
	nv_ctr images import "$tar" | sed 's/^/import: /'
	echo "$sum" >"$stamp"
done

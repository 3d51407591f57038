#!/usr/bin/env bash
# Builds localhost/pause:dev, the sandbox image of the local cluster (source: hack/images/pause),
# into _output/images/pause.tar, and imports it when the cluster's containerd runs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
dir=$NV_ROOT/_output/images/pause
rm -rf "$dir/rootfs"
mkdir -p "$dir/rootfs"
(cd "$NV_ROOT" && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags '-s -w' -o "$dir/rootfs/pause" ./hack/images/pause)
"$NV_ROOT/hack/images/mkimage.sh" "$dir/rootfs" "$NV_PAUSE_IMAGE" "$dir.tar" '["/pause"]'
if [[ -S $NV_CONTAINERD_SOCK ]]; then
	"$NV_ROOT/hack/images/import.sh" "$dir.tar"
fi

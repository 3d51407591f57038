#!/usr/bin/env bash
# Builds a static Go program from one of the separate tools modules under hack/tools into an
# image of its own (the binary in /usr/bin, /etc/passwd with root and nonroot 65532, /tmp), into
# _output/images/NAME.tar, and imports it when the local cluster's containerd runs (unless
# NV_IMAGE_NO_IMPORT=1). Go caches the build and the tarball is reproducible (mkimage.sh): a
# second run re-imports nothing.
#
#   hack/images/build-tool-image.sh TOOLS_MODULE PACKAGE NAME REF
#   e.g. hack/images/build-tool-image.sh coredns . coredns localhost/coredns:dev
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
if [[ $# -ne 4 ]]; then
	sed -n '8,9p' "${BASH_SOURCE[0]}" >&2
	exit 2
fi
module=$NV_ROOT/hack/tools/$1 pkg=$2 name=$3 ref=$4
[[ -f $module/go.mod ]] || nv_die "no tools module at $module"

dir=$NV_ROOT/_output/images/$name
rm -rf "$dir/rootfs"
mkdir -p "$dir/rootfs"/{usr/bin,etc,tmp,home/nonroot}
chmod 1777 "$dir/rootfs/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dir/rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$dir/rootfs/etc/group"
t0=$(date +%s)
(cd "$module" && GOWORK=off CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags '-s -w' \
	-o "$dir/rootfs/usr/bin/$name" "$pkg")
echo "build-tool-image: $name built in $(($(date +%s) - t0))s ($(du -h "$dir/rootfs/usr/bin/$name" | cut -f1))"
"$NV_ROOT/hack/images/mkimage.sh" "$dir/rootfs" "$ref" "$dir.tar" "[\"/usr/bin/$name\"]"
# NV_IMAGE_NO_IMPORT=1: build only (make run builds these ahead, up.sh imports them).
if [[ ${NV_IMAGE_NO_IMPORT:-0} != 1 && -n $(nv_containerd_socks) ]]; then
	"$NV_ROOT/hack/images/import.sh" "$dir.tar"
fi

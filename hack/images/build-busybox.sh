#!/usr/bin/env bash
# Builds localhost/busybox:dev (Debian's static busybox with every applet linked) into
# _output/images/busybox.tar, and imports it when the cluster's containerd runs. Tests use it
# as a small general-purpose image.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
busybox=/bin/busybox
[[ -x $busybox ]] || "$NV_ROOT/hack/install-deps.sh" images
if [[ $(ldd "$busybox" 2>&1 || true) != *"not a dynamic executable"* ]]; then
	nv_die "$busybox is not static; install busybox-static"
fi
dir=$NV_ROOT/_output/images/busybox
rm -rf "$dir/rootfs"
mkdir -p "$dir/rootfs"/{bin,etc,tmp,proc,sys,dev,root}
chmod 1777 "$dir/rootfs/tmp"
cp "$busybox" "$dir/rootfs/bin/busybox"
for applet in $("$busybox" --list); do
	[[ $applet == busybox ]] || ln -s busybox "$dir/rootfs/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$dir/rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$dir/rootfs/etc/group"
"$NV_ROOT/hack/images/mkimage.sh" "$dir/rootfs" localhost/busybox:dev "$dir.tar" '["/bin/sh"]'
if [[ -S $NV_CONTAINERD_SOCK ]]; then
	"$NV_ROOT/hack/images/import.sh" "$dir.tar"
fi

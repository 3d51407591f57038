#!/usr/bin/env bash
# Builds localhost/nativevirt-handler:dev, the node agent's image: the launcher image's Debian
# rootfs (libvirt's client library libvirt0 for the cgo bindings; ip, nft, sysctl and nsenter,
# with which the agent prepares the pod network inside launcher pods; busybox),
# made by hack/images/build-launcher.sh and shared here through hard links, plus
#   /usr/bin/nativevirt-handler     the node agent (cgo: links Debian's libvirt0)
# into _output/images/nativevirt-handler.tar, imported when the cluster's containerd runs.
#
#   hack/images/build-handler.sh
#   NV_LAUNCHER_SUITE, NV_LAUNCHER_BACKPORTS: the Debian variant, as for build-launcher.sh
#
# Sharing the launcher's rootfs costs no second debootstrap and keeps the agent's libvirt client
# the same version as the launchers' daemons. The image is rebuilt only when that rootfs or the
# binary changes (stamp in _output/images/handler/<variant>). The variant built last is the one at
# _output/images/nativevirt-handler.tar (a hard link).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
REF=${NV_HANDLER_IMAGE:-localhost/nativevirt-handler:dev}
SUITE=${NV_LAUNCHER_SUITE:-${NV_DEBIAN_SUITE:-trixie}}
VARIANT=$SUITE
default_backports=0
[[ $SUITE == trixie ]] && default_backports=1 # as build-launcher.sh
case ${NV_LAUNCHER_BACKPORTS:-$default_backports} in 1 | true | yes) VARIANT=$SUITE-backports ;; esac
launcher=$NV_ROOT/_output/images/launcher/$VARIANT
dir=$NV_ROOT/_output/images/handler/$VARIANT
tarball=$dir/nativevirt-handler.tar
current=$NV_ROOT/_output/images/nativevirt-handler.tar
t0=$(date +%s)

if [[ ! -f $launcher/base.stamp || ! -x $launcher/base/usr/sbin/libvirtd ]]; then
	nv_log "handler: building the launcher's Debian rootfs first"
	"$NV_ROOT/hack/images/build-launcher.sh"
fi

mkdir -p "$dir/bin"
(cd "$NV_ROOT" && go build -o "$dir/bin/nativevirt-handler" ./cmd/nativevirt-handler)

stamp=$( (cat "$launcher/base.stamp"; sha256sum "$dir"/bin/*; echo "$REF") | sha256sum | cut -c1-16)
if [[ -f $dir/stamp && $(cat "$dir/stamp") == "$stamp" && -f $tarball ]]; then
	nv_log "handler: image up to date ($tarball)"
else
	rootfs=$dir/rootfs
	rm -rf "$rootfs"
	cp -al "$launcher/base" "$rootfs"
	install -m 0755 "$dir/bin/nativevirt-handler" "$rootfs/usr/bin/"
	mkdir -p "$rootfs/var/lib/nativevirt/handler" "$rootfs/etc/nativevirt/handler-certs"
	missing=$(chroot "$rootfs" /usr/bin/ldd /usr/bin/nativevirt-handler 2>&1 | grep 'not found' || true)
	[[ -z $missing ]] || nv_die "nativevirt-handler needs libraries the image lacks: $missing"
	for tool in "ip -V" "nft --version" "sysctl --version" "nsenter --version"; do
		chroot "$rootfs" /bin/sh -c "$tool" >/dev/null 2>&1 || nv_die "the handler image cannot run $tool (pod network)"
	done
	"$NV_ROOT/hack/images/mkimage.sh" "$rootfs" "$REF" "$tarball" '["/usr/bin/nativevirt-handler"]'
	rm -rf "$rootfs"
	echo "$stamp" >"$dir/stamp"
	nv_log "handler: $tarball ($(du -m "$tarball" | cut -f1) MB)"
fi
ln -f "$tarball" "$current"

if [[ -S $NV_CONTAINERD_SOCK ]]; then
	"$NV_ROOT/hack/images/import.sh" "$current"
fi
nv_log "handler: done in $(($(date +%s) - t0)) s"

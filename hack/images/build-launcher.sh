#!/usr/bin/env bash
# Builds localhost/nativevirt-launcher:dev, the image of the launcher pod's compute container:
# a Debian minbase rootfs (debootstrap) with libvirt + QEMU, OVMF and swtpm, and the NativeVirt
# binaries
#   /usr/bin/nativevirt-launcher    PID 1 of the compute container (cgo: links Debian's libvirt0)
#   /usr/bin/nativevirt-copy-disk   static; copied into the pod's bin emptyDir by an init container
#   /usr/bin/nativevirt-importer    static; fills DataVolumes' claims in importer pods (qemu-img)
# into _output/images/nativevirt-launcher.tar, and imports it when the cluster's containerd runs.
#
#   hack/images/build-launcher.sh
#   NV_LAUNCHER_SUITE=trixie|bookworm   the Debian release of the rootfs (default trixie;
#                                       bookworm: libvirt 9.0, QEMU 7.2)
#   NV_LAUNCHER_BACKPORTS=1|0           libvirt, QEMU, OVMF and swtpm from <suite>-backports or not
#                                       (default 1 for trixie: libvirt 12.9, QEMU 11.1; with 0
#                                       trixie's own libvirt 11.3, QEMU 10.0; default 0 otherwise)
#
# The node agent's image (build-handler.sh) shares the same rootfs, so both follow these variables.
# Each variant (suite, suite-backports) keeps its own caches under _output/images/launcher/<variant>:
# the trimmed Debian rootfs is rebuilt only when the package list, suite or mirror change
# (base.stamp), the image only when the rootfs or a binary changes (stamp), so that switching
# between variants to compare them costs a copy, not a debootstrap. The variant built last is the
# one at _output/images/nativevirt-launcher.tar (a hard link), which deploy-local.sh deploys.
# debootstrap uses the Debian mirror of this machine's apt sources (NV_DEBIAN_MIRROR overrides it).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
REF=${NV_LAUNCHER_IMAGE:-localhost/nativevirt-launcher:dev}
# NV_DEBIAN_SUITE is the older name of NV_LAUNCHER_SUITE.
SUITE=${NV_LAUNCHER_SUITE:-${NV_DEBIAN_SUITE:-trixie}}
# trixie-backports by default: its libvirt 12 asks QEMU 11 for the started vCPU's features with one
# qom-list-get where trixie's libvirt 11.3 sends ~460 qom-gets (0.05 instead of 0.26 CPU-seconds
# of libvirtd and QEMU per domain start: hack/images/start-cost.sh).
default_backports=0
[[ $SUITE == trixie ]] && default_backports=1
BACKPORTS=${NV_LAUNCHER_BACKPORTS:-$default_backports}
case $BACKPORTS in 1 | true | yes) BACKPORTS=1 ;; *) BACKPORTS=0 ;; esac
VARIANT=$SUITE
[[ $BACKPORTS == 1 ]] && VARIANT=$SUITE-backports
# What the compute container runs: libvirt's daemons, QEMU (x86, TCG or KVM), qemu-img, virsh
# for debugging, ip/ps, and busybox for a shell toolbox. The node agent's image shares this rootfs
# and prepares the pod network with ip (iproute2), sysctl (procps), nft (nftables) and nsenter
# (util-linux, essential).
# VIRT come from <suite>-backports with NV_LAUNCHER_BACKPORTS=1 (their dependencies as apt
# resolves them).
TOOLS=(iproute2 procps busybox nftables)
VIRT=(libvirt-daemon libvirt-daemon-driver-qemu qemu-system-x86 qemu-utils libvirt-clients
	ovmf swtpm swtpm-tools)
# Bump when the way the base rootfs is made (not its package list) changes.
BASE_VERSION=3

dir=$NV_ROOT/_output/images/launcher/$VARIANT
base=$dir/base
tarball=$dir/nativevirt-launcher.tar
current=$NV_ROOT/_output/images/nativevirt-launcher.tar
t0=$(date +%s)

# debian_mirror SUITE prints the URI of the apt source serving SUITE's main archive.
debian_mirror() {
	local files=() f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -f $f ]] && files+=("$f")
	done
	if [[ ${#files[@]} -gt 0 ]]; then
		# One-line format: deb [options] URI SUITE COMPONENTS...
		sed -E 's/\[[^]]*\]//' "${files[@]}" | awk -v s="$1" '$1 == "deb" && $3 == s {print $2; exit}'
	fi
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		# deb822 format: paragraphs with Types, URIs and Suites fields.
		awk -v s="$1" 'BEGIN {RS = ""; FS = "\n"} {
			uri = ""; deb = 0; suite = 0
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^Types:/ && $i ~ /[ \t]deb([ \t]|$)/) deb = 1
				if ($i ~ /^URIs:/) { split($i, u, /[ \t]+/); uri = u[2] }
				if ($i ~ /^Suites:/) { n = split($i, w, /[ \t]+/); for (j = 2; j <= n; j++) if (w[j] == s) suite = 1 }
			}
			if (deb && suite && uri != "") { print uri; exit }
		}' "$f"
	done
}

if [[ $(id -u) -ne 0 ]]; then
	nv_die "build-launcher: debootstrap needs root"
fi
command -v debootstrap >/dev/null || "$NV_ROOT/hack/install-deps.sh" node
# A suite the host's sources do not name (trixie on a Debian 12 host) comes from the mirror that
# serves the host's own release.
host_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
mirror=${NV_DEBIAN_MIRROR:-$(debian_mirror "$SUITE" | head -1)}
[[ -n $mirror || -z $host_suite ]] || mirror=$(debian_mirror "$host_suite" | head -1)
mirror=${mirror:-http://deb.debian.org/debian}

# --- 1. the Debian rootfs (cached)
base_stamp=$(printf '%s\n' "$BASE_VERSION" "$SUITE" "$BACKPORTS" "$mirror" "${TOOLS[@]}" "${VIRT[@]}" | sha256sum | cut -c1-16)
if [[ -f $dir/base.stamp && $(cat "$dir/base.stamp") == "$base_stamp" && -x $base/usr/sbin/libvirtd ]]; then
	nv_log "launcher: Debian rootfs up to date"
else
	nv_log "launcher: debootstrap --variant=minbase $SUITE from $mirror (${TOOLS[*]})"
	rm -rf "$base" "$dir/base.stamp"
	mkdir -p "$dir"
	# debootstrap lays down the base system and the tools; apt inside the rootfs then installs
	# libvirt, QEMU, OVMF and swtpm. debootstrap's own resolver (Debian 12's 1.0.128) picks the
	# first of alternatives and orders pre-dependencies wrongly for trixie (systemd for
	# cron-daemon-common, unpacked before libsystemd-shared is configured); apt gets both right,
	# and takes the backports when asked.
	incl=$(
		IFS=,
		echo "${TOOLS[*]}"
	)
	if ! debootstrap --variant=minbase --include="$incl" "$SUITE" "$base" "$mirror" >"$dir/debootstrap.log" 2>&1; then
		tail -20 "$dir/debootstrap.log" >&2
		nv_die "debootstrap failed (log: $dir/debootstrap.log)"
	fi
	from=()
	if [[ $BACKPORTS == 1 ]]; then
		echo "deb $mirror $SUITE-backports main" >"$base/etc/apt/sources.list.d/backports.list"
		from=(-t "$SUITE-backports")
	fi
	nv_log "launcher: apt-get install ${from[*]} ${VIRT[*]}"
	cp /etc/resolv.conf "$base/etc/resolv.conf"
	if ! { chroot "$base" apt-get update &&
		chroot "$base" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
			"${from[@]}" "${VIRT[@]}"; } >"$dir/apt.log" 2>&1; then
		tail -20 "$dir/apt.log" >&2
		nv_die "apt-get install in the rootfs failed (log: $dir/apt.log)"
	fi
	rm -f "$base/etc/resolv.conf"
	# What the image holds, for the record (and the report of make images).
	# shellcheck disable=SC2016 # dpkg-query's format, not a shell expansion
	chroot "$base" dpkg-query -W -f '${Package} ${Version}\n' >"$dir/packages.txt"
	# libvirtd resolves its built-in QEMU user (Debian: libvirt-qemu) before it reads qemu.conf
	# and refuses to start its QEMU driver without it, even with user = "root"; the package that
	# would create it (libvirt-daemon-system) brings systemd units and services we do not want.
	grep -q '^libvirt-qemu:' "$base/etc/passwd" ||
		echo 'libvirt-qemu:x:64055:64055:Libvirt Qemu:/var/lib/libvirt:/usr/sbin/nologin' >>"$base/etc/passwd"
	grep -q '^libvirt-qemu:' "$base/etc/group" || echo 'libvirt-qemu:x:64055:' >>"$base/etc/group"
	# Trim: documentation, manuals, translations, apt's cache and lists, logs.
	rm -rf "$base"/usr/share/{doc,man,info,locale,lintian,linda} "$base"/var/cache/apt/* \
		"$base"/var/lib/apt/lists/* "$base"/var/cache/debconf/*-old "$base"/var/log/*
	find "$base/var/cache/ldconfig" -type f -delete 2>/dev/null || true
	mkdir -p "$base"/var/run/nativevirt "$base"/var/run/nativevirt-disks "$base"/var/run/nativevirt-bin
	echo "$base_stamp" >"$dir/base.stamp"
	nv_log "launcher: Debian rootfs $(du -sm "$base" | cut -f1) MB"
fi

# --- 2. the binaries
mkdir -p "$dir/bin"
(
	cd "$NV_ROOT"
	go build -o "$dir/bin/nativevirt-launcher" ./cmd/nativevirt-launcher
	CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$dir/bin/nativevirt-copy-disk" ./cmd/nativevirt-copy-disk
	CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$dir/bin/nativevirt-importer" ./cmd/nativevirt-importer
)
[[ $(ldd "$dir/bin/nativevirt-copy-disk" 2>&1 || true) == *"not a dynamic executable"* ]] ||
	nv_die "nativevirt-copy-disk is not static: it must run in images without a libc"

# --- 3. the image (cached on the rootfs and the binaries)
stamp=$( (cat "$dir/base.stamp"; sha256sum "$dir"/bin/* "$(realpath "${BASH_SOURCE[0]}")"; echo "$REF") | sha256sum | cut -c1-16)
if [[ -f $dir/stamp && $(cat "$dir/stamp") == "$stamp" && -f $tarball ]]; then
	nv_log "launcher: image up to date ($tarball)"
else
	rootfs=$dir/rootfs
	rm -rf "$rootfs"
	# Hard links: the rootfs costs no copy; mkimage.sh only reads it.
	cp -al "$base" "$rootfs"
	# Only qemu-system-x86_64 runs guests: the i386 and microvm emulators would only cost space
	# and a capability probe each when libvirtd starts.
	rm -f "$rootfs"/usr/bin/qemu-system-i386 "$rootfs"/usr/libexec/qemu-system-i386 \
		"$rootfs"/usr/bin/qemu-system-x86_64-microvm
	install -m 0755 "$dir/bin/nativevirt-launcher" "$dir/bin/nativevirt-copy-disk" "$dir/bin/nativevirt-importer" "$rootfs/usr/bin/"
	# The launcher must find every library it links in the image itself.
	missing=$(chroot "$rootfs" /usr/bin/ldd /usr/bin/nativevirt-launcher 2>&1 | grep 'not found' || true)
	[[ -z $missing ]] || nv_die "nativevirt-launcher needs libraries the image lacks: $missing"
	"$NV_ROOT/hack/images/mkimage.sh" "$rootfs" "$REF" "$tarball" '["/usr/bin/nativevirt-launcher"]'
	rm -rf "$rootfs"
	echo "$stamp" >"$dir/stamp"
	nv_log "launcher: $tarball ($(du -m "$tarball" | cut -f1) MB)"
fi
# The variant built last is the launcher image: deploy-local.sh and import.sh take it from here.
ln -f "$tarball" "$current"
echo "$VARIANT" >"$NV_ROOT/_output/images/launcher/current"
nv_log "launcher: $VARIANT: $(grep -E '^(libvirt-daemon|qemu-system-x86|ovmf|swtpm) ' "$dir/packages.txt" 2>/dev/null | tr '\n' ' ')"

if [[ -S $NV_CONTAINERD_SOCK ]]; then
	"$NV_ROOT/hack/images/import.sh" "$current"
fi
nv_log "launcher: done in $(($(date +%s) - t0)) s"

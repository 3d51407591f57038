#!/usr/bin/env bash
# Builds the demo guest's kernel and initramfs from Debian packages into _output/images/guest:
#   vmlinuz     Debian's bookworm kernel (linux-image-<abi>-amd64, fetched with apt-get download)
#   initrd.img  a gzip'd cpio with Debian's static busybox, the few kernel modules a VM needs
#               (virtio, AHCI/CD-ROM, ISO9660/FAT/ext4, ACPI power button), Debian's QEMU guest agent
#               (qemu-ga with the shared libraries it loads) and the /init below
# build-demo-disk.sh turns them into a bootable disk; kernelBoot tests use them as they are.
#
#   hack/images/build-guest.sh          # cached: rebuilds only when this script or the packages change
#
# The guest's /init (PID 1) mounts proc/sys/dev, prints `NativeVirt demo guest ready` on ttyS0,
# configures eth0 by DHCP (udhcpc: address, router, MTU, name servers and search domains) when
# present, runs a mini cloud-init (a disk labelled cidata
# (NoCloud) or config-2 (ConfigDrive): sets the hostname from the meta-data and runs the user-data
# when it starts with `#!`), powers off on the ACPI power button (busybox acpid), starts the guest
# agent when the VM has its channel (org.qemu.guest_agent.0, which NativeVirt always adds), then
# keeps a root shell on ttyS0 with the prompt `demo:~# `.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"

out=$NV_ROOT/_output/images/guest
cache=$out/cache
busybox=/bin/busybox
# Modules the initramfs carries (their dependencies come along, from modules.dep).
# The guest agent's Debian packages: qemu-ga's shared libraries come from these (resolved below
# with the packaged dynamic loader, so a missing one fails the build).
agent_pkgs=(qemu-guest-agent libc6 libglib2.0-0 libpcre2-8-0 libnuma1 libudev1 liburing2)
modules=(virtio_pci virtio_blk virtio_net virtio_scsi virtio_console e1000 sd_mod sr_mod ahci
	isofs vfat nls_cp437 nls_ascii nls_iso8859-1 nls_utf8 button evdev)
# Modules the initramfs carries but the kernel loads only when asked (a mount of an ext2/3/4 file
# system): loading them at boot would cost every boot CPU time under emulation.
lazy_modules=(ext4 crc32c_generic)

need=()
for cmd in apt-get dpkg-deb cpio gzip; do
	command -v "$cmd" >/dev/null || need+=("$cmd")
done
[[ -x $busybox ]] || need+=(busybox)
if [[ ${#need[@]} -gt 0 ]]; then
	"$NV_ROOT/hack/install-deps.sh" node
fi
[[ $(ldd "$busybox" 2>&1 || true) == *"not a dynamic executable"* ]] || nv_die "$busybox is not static; install busybox-static"

# The kernel package bookworm offers now (linux-image-amd64 depends on it), unless pinned.
kpkg=${NV_GUEST_KERNEL_PKG:-$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')}
[[ -n $kpkg ]] || nv_die "cannot tell the kernel package from linux-image-amd64 (apt-get update?)"
kabi=${kpkg#linux-image-}

stamp=$( (cat "${BASH_SOURCE[0]}"; echo "$kpkg"; sha256sum "$busybox") | sha256sum | cut -c1-16)
if [[ -f $out/stamp && $(cat "$out/stamp") == "$stamp" && -f $out/vmlinuz && -f $out/initrd.img ]]; then
	nv_log "guest: up to date ($kpkg, $out)"
	exit 0
fi

mkdir -p "$cache"
# fetch PKG: the cached .deb of PKG, downloaded with apt-get the first time.
fetch() {
	local pkg=$1 deb dl
	deb=$(compgen -G "$cache/${pkg}_*.deb" | head -1 || true)
	if [[ -z $deb ]]; then
		nv_log "guest: apt-get download $pkg" >&2
		# _apt cannot write to every directory: download in a world-writable scratch dir.
		dl=$(mktemp -d)
		chmod 0777 "$dl"
		(cd "$dl" && apt-get -q download "$pkg" >/dev/null 2>&1) || { rm -rf "$dl"; nv_die "apt-get download $pkg failed"; }
		mv "$dl"/*.deb "$cache/"
		rm -rf "$dl"
		deb=$(compgen -G "$cache/${pkg}_*.deb" | head -1)
	fi
	echo "$deb"
}
deb=$(fetch "$kpkg")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nv_log "guest: unpacking $(basename "$deb")"
dpkg-deb -x "$deb" "$work/k"
kdir=$work/k/lib/modules/$kabi
[[ -d $kdir ]] || nv_die "no modules for $kabi in $deb"
"$busybox" depmod -b "$work/k" "$kabi"

root=$work/initrd
mkdir -p "$root"/{bin,sbin,etc/acpi/PWRF,etc/udhcpc,proc,sys,dev,run,tmp,mnt,root,usr/bin,usr/sbin}
chmod 1777 "$root/tmp"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list-full); do
	[[ -e $root/$applet ]] || ln -s /bin/busybox "$root/$applet"
done

# Modules with their dependencies, in load order (dependencies first, as modules.dep lists them).
declare -A copied=()
for m in "${modules[@]}" "${lazy_modules[@]}"; do
	line=$(grep -E "/${m}\.ko:" "$kdir/modules.dep" || true)
	[[ -n $line ]] || { grep -qE "/${m}\.ko\$" "$kdir/modules.builtin" && continue; nv_die "module $m not found in $kabi"; }
	for f in ${line/:/}; do
		[[ -n ${copied[$f]:-} ]] && continue
		copied[$f]=1
		mkdir -p "$root/lib/modules/$kabi/$(dirname "$f")"
		cp "$kdir/$f" "$root/lib/modules/$kabi/$f"
	done
done
cp "$kdir"/modules.builtin "$kdir"/modules.order "$root/lib/modules/$kabi/"
"$busybox" depmod -b "$root" "$kabi"
printf '%s\n' "${modules[@]}" >"$root/etc/modules"

# The guest agent: qemu-ga and every shared library it loads, resolved by the packaged dynamic
# loader itself (the build host is the same architecture), placed where that loader looks.
ga=$work/ga
mkdir -p "$ga"
for p in "${agent_pkgs[@]}"; do
	dpkg-deb -x "$(fetch "$p")" "$ga"
done
libdir=lib/x86_64-linux-gnu
ldso=$ga/$libdir/ld-linux-x86-64.so.2
[[ -x $ldso && -x $ga/usr/sbin/qemu-ga ]] || nv_die "guest: qemu-ga or its dynamic loader missing from ${agent_pkgs[*]}"
mkdir -p "$root/$libdir" "$root/lib64"
cp "$ga/usr/sbin/qemu-ga" "$root/usr/sbin/qemu-ga"
cp "$ldso" "$root/$libdir/"
ln -s "/$libdir/ld-linux-x86-64.so.2" "$root/lib64/ld-linux-x86-64.so.2"
libs=$("$ldso" --library-path "$ga/$libdir:$ga/usr/$libdir" --list "$ga/usr/sbin/qemu-ga") || nv_die "guest: cannot resolve qemu-ga's libraries"
[[ $libs != *"not found"* ]] || nv_die "guest: qemu-ga needs a library none of ${agent_pkgs[*]} has: $libs"
# shellcheck disable=SC2013 # ldd prints one path a line, none with white space.
for lib in $(awk '$2 == "=>" && $3 ~ /^\// {print $3}' <<<"$libs"); do
	cp "$(readlink -f "$lib")" "$root/$libdir/$(basename "$lib")"
done
# glibc's name service (the agent's getpwnam for SSH keys) reads only files here.
printf 'passwd: files\ngroup: files\nshadow: files\n' >"$root/etc/nsswitch.conf"
cat >"$root/etc/os-release" <<'EOF'
NAME="NativeVirt demo guest"
ID=nativevirt-demo
PRETTY_NAME="NativeVirt demo guest (busybox)"
VERSION_ID=1
VERSION="1"
EOF

printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
printf 'root:*:19000:0:99999:7:::\n' >"$root/etc/shadow"
chmod 0600 "$root/etc/shadow"
# The guest agent sets passwords with chpasswd (user:password lines on stdin, -e: already
# crypted), which busybox-static lacks: this one hashes with busybox's mkpasswd (SHA-512).
cat >"$root/usr/sbin/chpasswd" <<'EOF'
#!/bin/sh
crypted=0
[ "$1" = -e ] && crypted=1
while IFS=: read -r user pass; do
	grep -q "^$user:" /etc/passwd || { echo "chpasswd: unknown user $user" >&2; exit 1; }
	[ $crypted = 1 ] || pass=$(mkpasswd -m sha512 "$pass") || exit 1
	awk -F: -v OFS=: -v u="$user" -v p="$pass" '$1 == u {$2 = p} {print}' /etc/shadow >/etc/shadow.new &&
		chmod 0600 /etc/shadow.new && mv /etc/shadow.new /etc/shadow || exit 1
done
EOF
chmod 0755 "$root/usr/sbin/chpasswd"
printf 'export PS1='\''demo:~# '\''\nexport PATH=/sbin:/bin:/usr/sbin:/usr/bin\nexport HOME=/root\n' >"$root/etc/profile"

# busybox acpid runs /etc/acpi/PWRF/00000080 on the power button ("virsh shutdown", ACPI).
cat >"$root/etc/acpi/PWRF/00000080" <<'EOF'
#!/bin/sh
echo "NativeVirt demo guest: ACPI power button, powering off" >/dev/ttyS0
sync
poweroff -f
EOF
chmod 0755 "$root/etc/acpi/PWRF/00000080"

cat >"$root/etc/udhcpc/default.script" <<'EOF'
#!/bin/sh
# udhcpc event handler: configure the interface, default route and resolver.
case "$1" in
deconfig)
	ip addr flush dev "$interface"
	ip link set "$interface" up
	;;
bound|renew)
	ip addr flush dev "$interface"
	[ -n "$mtu" ] && ip link set dev "$interface" mtu "$mtu"
	ip addr add "$ip/${mask:-24}" dev "$interface"
	for r in $router; do ip route add default via "$r" dev "$interface"; break; done
	: >/etc/resolv.conf
	for d in $dns; do echo "nameserver $d" >>/etc/resolv.conf; done
	if [ -n "$search" ]; then echo "search $search" >>/etc/resolv.conf
	elif [ -n "$domain" ]; then echo "search $domain" >>/etc/resolv.conf; fi
	echo "NativeVirt demo guest: $interface $ip/${mask:-24}" >/dev/ttyS0
	;;
esac
exit 0
EOF
chmod 0755 "$root/etc/udhcpc/default.script"

cat >"$root/init" <<'EOF'
#!/bin/sh
# NativeVirt demo guest: PID 1 of the initramfs.
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
echo "NativeVirt demo guest ready ($(uname -r))" >/dev/ttyS0
hostname demo
ip link set lo up
for m in $(cat /etc/modules); do modprobe -q "$m" 2>/dev/null; done
acpid -l /run/acpid.log

# Network: DHCP on eth0 when the VM has an interface (in the background once the first tries fail).
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 10 ] && grep -q '^0x0200' /sys/bus/pci/devices/*/class 2>/dev/null; do
	sleep 0.2; i=$((i + 1))
done
if [ -e /sys/class/net/eth0 ]; then
	ip link set eth0 up
	udhcpc -i eth0 -b -t 4 -T 1 -S -x hostname:demo >/run/udhcpc.log 2>&1
fi

# Mini cloud-init: NoCloud (label cidata) or ConfigDrive (label config-2).
cloudinit() {
	for label in cidata CIDATA config-2; do
		dev=$(findfs "LABEL=$label" 2>/dev/null) || continue
		mkdir -p /mnt/cloudinit
		mount -r "$dev" /mnt/cloudinit 2>/dev/null || mount -r -t iso9660 "$dev" /mnt/cloudinit 2>/dev/null || continue
		if [ "$label" = config-2 ]; then
			ud=/mnt/cloudinit/openstack/latest/user_data
			h=$(sed -n 's/.*"hostname": *"\([^"]*\)".*/\1/p' /mnt/cloudinit/openstack/latest/meta_data.json 2>/dev/null)
		else
			ud=/mnt/cloudinit/user-data
			h=$(sed -n 's/^ *local-hostname: *//p' /mnt/cloudinit/meta-data 2>/dev/null | tr -d "\"'")
		fi
		[ -n "$h" ] && hostname "$h"
		echo "NativeVirt demo guest: cloud-init from $dev ($label)" >/dev/ttyS0
		if [ -f "$ud" ] && [ "$(head -c 2 "$ud")" = "#!" ]; then
			cp "$ud" /run/user-data
			chmod 0700 /run/user-data
			/run/user-data </dev/null >/dev/ttyS0 2>&1
			echo "NativeVirt demo guest: user-data exited $?" >/dev/ttyS0
		fi
		return 0
	done
	return 1
}
# Block devices appear asynchronously once their drivers are loaded.
i=0
until cloudinit || [ $i -ge 5 ]; do
	sleep 0.2; i=$((i + 1))
done

# The QEMU guest agent on its virtio-serial port (the device node of the port so named).
for p in /sys/class/virtio-ports/*; do
	[ "$(cat "$p/name" 2>/dev/null)" = org.qemu.guest_agent.0 ] || continue
	mkdir -p /run/qemu-ga
	qemu-ga -d -m virtio-serial -p "/dev/${p##*/}" -t /run/qemu-ga -f /run/qemu-ga.pid -l /run/qemu-ga.log
	echo "NativeVirt demo guest: guest agent started" >/dev/ttyS0
done

cd /root
while :; do
	setsid cttyhack sh -l
	sleep 1
done
EOF
chmod 0755 "$root/init"

nv_log "guest: packing initramfs (${#copied[@]} modules)"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --reproducible --quiet | gzip -9n) >"$work/initrd.img"
cp "$work/k/boot/vmlinuz-$kabi" "$work/vmlinuz"
mv "$work/vmlinuz" "$work/initrd.img" "$out/"
echo "$kpkg" >"$out/kernel-package"
echo "$stamp" >"$out/stamp"
nv_log "guest: $out/vmlinuz ($(du -k "$out/vmlinuz" | cut -f1) KiB), initrd.img ($(du -k "$out/initrd.img" | cut -f1) KiB)"

#!/usr/bin/env bash
# Builds the demo containerDisk image localhost/nativevirt-demo-disk:dev from the demo guest of
# build-guest.sh (run first, or let this script run it):
#   _output/images/demo-disk/disk.img   a raw disk: one FAT "superfloppy" (no partition table)
#                                       with syslinux, the kernel and the initramfs; SeaBIOS boots it
#   _output/images/demo-disk.tar        the image (FROM scratch layout: /disk/disk.img, 107:107)
#   _output/images/demo-kernel.tar      localhost/nativevirt-demo-kernel:dev, the same guest for
#                                       kernelBoot: /boot/vmlinuz and /boot/initrd.img
# and imports the images when the local cluster's containerd runs.
#
#   hack/images/build-demo-disk.sh [--verify]   # cached: rebuilt when the guest or this script changes
#
# No loop mounts: mkfs.fat writes the filesystem into a plain file, `syslinux --install` and mcopy
# reach it through mtools. --verify boots the disk under QEMU (TCG, SeaBIOS) and waits for the
# guest's banner on the serial port.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
REF=${NV_DEMO_DISK_IMAGE:-localhost/nativevirt-demo-disk:dev}
KERNEL_REF=${NV_DEMO_KERNEL_IMAGE:-localhost/nativevirt-demo-kernel:dev}
guest=$NV_ROOT/_output/images/guest
out=$NV_ROOT/_output/images/demo-disk
tarball=$NV_ROOT/_output/images/demo-disk.tar
kernel_tarball=$NV_ROOT/_output/images/demo-kernel.tar
verify=0
[[ ${1:-} == --verify ]] && verify=1

# syslinux's UEFI loader and its core module (Debian's syslinux-efi).
efi_loader=/usr/lib/SYSLINUX.EFI/efi64/syslinux.efi
efi_core=/usr/lib/syslinux/modules/efi64/ldlinux.e64
for cmd in mkfs.fat syslinux mcopy; do
	command -v "$cmd" >/dev/null || "$NV_ROOT/hack/install-deps.sh" node
done
[[ -f $efi_loader && -f $efi_core ]] || "$NV_ROOT/hack/install-deps.sh" node
"$NV_ROOT/hack/images/build-guest.sh"

stamp=$( (cat "${BASH_SOURCE[0]}" "$guest/stamp"; echo "$REF $KERNEL_REF") | sha256sum | cut -c1-16)
if [[ -f $out/stamp && $(cat "$out/stamp") == "$stamp" && -f $tarball && -f $kernel_tarball ]]; then
	nv_log "demo-disk: up to date ($tarball)"
else
	rm -rf "$out"
	mkdir -p "$out"
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	cat >"$work/syslinux.cfg" <<'EOF'
SERIAL 0 115200
DEFAULT demo
PROMPT 0
TIMEOUT 0
LABEL demo
  KERNEL /vmlinuz
  INITRD /initrd.img
  APPEND console=ttyS0 no_timer_check quiet
EOF
	# Room for the files plus 2 MiB for syslinux (BIOS and UEFI) and FAT metadata, in whole MiB.
	need_kib=$(($(du -k "$guest/vmlinuz" | cut -f1) + $(du -k "$guest/initrd.img" | cut -f1) + 2048))
	size_kib=$(((need_kib + 1023) / 1024 * 1024))
	img=$work/disk.img
	# A fixed volume id keeps the image reproducible.
	mkfs.fat -C -n NVDEMO -i 4e560001 "$img" "$size_kib" >/dev/null
	syslinux --install "$img"
	touch -d @0 "$work/syslinux.cfg"
	MTOOLS_SKIP_CHECK=1 mcopy -m -i "$img" "$guest/vmlinuz" "$guest/initrd.img" "$work/syslinux.cfg" ::
	# UEFI firmware (OVMF, spec.domain.firmware.bootloader.efi) boots the removable-media path
	# EFI/BOOT/BOOTX64.EFI: syslinux's UEFI loader, which reads the same configuration there.
	cp "$efi_loader" "$work/BOOTX64.EFI"
	cp "$efi_core" "$work/ldlinux.e64"
	touch -d @0 "$work/BOOTX64.EFI" "$work/ldlinux.e64"
	MTOOLS_SKIP_CHECK=1 mmd -i "$img" ::EFI ::EFI/BOOT
	MTOOLS_SKIP_CHECK=1 mcopy -m -i "$img" "$work/BOOTX64.EFI" "$work/ldlinux.e64" "$work/syslinux.cfg" ::EFI/BOOT/
	mv "$img" "$out/disk.img"

	# The containerDisk layout KubeVirt's images use: /disk/disk.img owned by 107:107 (qemu).
	mkdir -p "$out/rootfs/disk"
	cp "$out/disk.img" "$out/rootfs/disk/disk.img"
	chmod 0755 "$out/rootfs/disk"
	chmod 0444 "$out/rootfs/disk/disk.img"
	chown -R 107:107 "$out/rootfs/disk"
	MKIMAGE_KEEP_OWNERS=1 "$NV_ROOT/hack/images/mkimage.sh" "$out/rootfs" "$REF" "$tarball" '[]'

	# The kernelBoot image: kernel and initramfs as files (spec.domain.firmware.kernelBoot with
	# kernelPath /boot/vmlinuz, initrdPath /boot/initrd.img).
	mkdir -p "$out/kernel-rootfs/boot"
	cp "$guest/vmlinuz" "$guest/initrd.img" "$out/kernel-rootfs/boot/"
	chmod 0444 "$out/kernel-rootfs/boot/"*
	"$NV_ROOT/hack/images/mkimage.sh" "$out/kernel-rootfs" "$KERNEL_REF" "$kernel_tarball" '[]'
	echo "$stamp" >"$out/stamp"
	nv_log "demo-disk: $out/disk.img ($((size_kib / 1024)) MiB), $tarball ($(du -k "$tarball" | cut -f1) KiB)"
fi

if [[ $verify == 1 ]]; then
	nv_log "demo-disk: booting it under QEMU (TCG, SeaBIOS)"
	log=$(mktemp)
	t0=$(date +%s)
	qemu-system-x86_64 -machine pc,accel=tcg -m 256 -display none -monitor none -no-reboot \
		-drive "file=$out/disk.img,format=raw,if=virtio,readonly=on" -serial "file:$log" &
	qpid=$!
	ok=0
	for _ in $(seq 1 120); do
		if grep -aq 'NativeVirt demo guest ready' "$log"; then
			ok=1
			break
		fi
		sleep 0.5
	done
	kill "$qpid" 2>/dev/null || true
	wait "$qpid" 2>/dev/null || true
	tr -d '\r' <"$log" | grep -a -v '^$' | tail -5 | sed 's/^/demo-disk: serial: /'
	rm -f "$log"
	[[ $ok == 1 ]] || nv_die "demo-disk: no banner on the serial port within 60 s"
	nv_log "demo-disk: banner after $(($(date +%s) - t0)) s"
fi

if [[ -S $NV_CONTAINERD_SOCK ]]; then
	"$NV_ROOT/hack/images/import.sh" "$tarball" "$kernel_tarball"
fi

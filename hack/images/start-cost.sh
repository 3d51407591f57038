#!/usr/bin/env bash
# Measures what one domain start costs the libvirt and QEMU of a launcher rootfs built by
# build-launcher.sh, without a cluster: the rootfs's own libvirtd (chroot, private mount and PID
# namespaces, tmpfs over every directory it writes) starts a minimal TCG domain (q35, 128 MiB,
# 1 vCPU, no devices, paused vCPUs so that no guest code runs) N times after a warm-up start (the
# capability probe), and prints per start the wall time of `virsh start` and the CPU-seconds
# (user + system) of libvirtd and of that start's QEMU, then what a launcher pod pays: a fresh
# libvirtd with the capability cache filled, from its start to its first domain started; with
# QMP=1 also the QMP commands libvirt sent per start (libvirtd then logs its monitor traffic, which
# costs CPU: not for the figures).
#
#   hack/images/start-cost.sh [VARIANT...]    e.g. bookworm trixie trixie-backports (default: every
#                                             rootfs under _output/images/launcher)
#   START_COST_N=8 (starts per variant), START_COST_ROUNDS=2 (the variants alternate), QMP=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
[[ $(id -u) -eq 0 ]] || nv_die "start-cost: needs root (chroot, namespaces)"
n=${START_COST_N:-8} rounds=${START_COST_ROUNDS:-2}
top=$NV_ROOT/_output/images/launcher
variants=("$@")
if [[ ${#variants[@]} -eq 0 ]]; then
	for d in "$top"/*/base; do [[ -x $d/usr/sbin/libvirtd ]] && variants+=("$(basename "$(dirname "$d")")"); done
fi
[[ ${#variants[@]} -gt 0 ]] || nv_die "start-cost: no launcher rootfs under $top (hack/images/build-launcher.sh)"

# one ROOTFS N QMP: the measurement in fresh namespaces (everything it starts dies with them).
one() {
	unshare -m -p -f --mount-proc --propagation private bash -s "$@" <<'INNER'
set -euo pipefail
root=$1 n=$2 qmp=$3
# libvirt sets up QEMU's private /dev with the root a mount point, as in a container.
mount --rbind "$root" "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
for d in run tmp var/lib/libvirt var/cache/libvirt var/log/libvirt etc/libvirt; do
	mkdir -p "$root/$d"
	mount -t tmpfs tmpfs "$root/$d"
done
log='log_outputs = "3:stderr"'
[[ $qmp == 1 ]] && log='log_filters = "1:qemu.qemu_monitor"
log_outputs = "1:file:/tmp/libvirtd.log"'
printf '%s\n' 'unix_sock_dir = "/run/libvirt"' 'auth_unix_rw = "none"' 'auth_unix_ro = "none"' "$log" >"$root/etc/libvirt/libvirtd.conf"
printf '%s\n' 'user = "root"' 'group = "root"' 'stdio_handler = "file"' 'remember_owner = 0' 'cgroup_controllers = [ ]' >"$root/etc/libvirt/qemu.conf"
cat >"$root/tmp/dom.xml" <<XML
<domain type='qemu'><name>cost</name><memory unit='MiB'>128</memory><vcpu>1</vcpu>
<os><type arch='x86_64' machine='q35'>hvm</type></os><features><acpi/></features>
<devices><emulator>/usr/bin/qemu-system-x86_64</emulator></devices></domain>
XML
mkdir -p "$root/run/libvirt" "$root/run/lock"
chroot "$root" /usr/sbin/virtlogd -d
chroot "$root" /usr/sbin/libvirtd -d --config /etc/libvirt/libvirtd.conf
for _ in $(seq 100); do [[ -S $root/run/libvirt/libvirt-sock ]] && break; sleep 0.1; done
virsh() { chroot "$root" /usr/bin/virsh -q -c qemu:///system "$@"; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
lpid=$(pgrep -x libvirtd)
echo "  $(virsh version --daemon | grep -E 'daemon|hypervisor' | tr -s ' \n' ' ')"
virsh define /tmp/dom.xml >/dev/null
virsh start --paused cost >/dev/null
virsh destroy cost >/dev/null
[[ $qmp == 1 ]] && : >"$root/tmp/libvirtd.log"
sum_w=0 sum_l=0 sum_q=0
for _ in $(seq "$n"); do
	l0=$(ticks "$lpid") t0=$(date +%s%N)
	virsh start --paused cost >/dev/null
	t1=$(date +%s%N) l1=$(ticks "$lpid")
	q=$(ticks "$(pgrep -f 'qemu-system-x86_64.*cost')")
	virsh destroy cost >/dev/null
	sum_w=$((sum_w + (t1 - t0) / 1000000)) sum_l=$((sum_l + l1 - l0)) sum_q=$((sum_q + q))
done
awk -v n="$n" -v w="$sum_w" -v l="$sum_l" -v q="$sum_q" -v hz="$hz" 'BEGIN {
	printf "  per start (mean of %d): wall %d ms, libvirtd %.3f CPU-s, QEMU %.3f CPU-s, both %.3f CPU-s\n", n, w / n, l / hz / n, q / hz / n, (l + q) / hz / n }'
if [[ $qmp == 1 ]]; then
	echo "  QMP commands per start:"
	grep QEMU_MONITOR_SEND_MSG "$root/tmp/libvirtd.log" | grep -o '"execute":"[a-z-]*"' | cut -d'"' -f4 |
		sort | uniq -c | sort -rn | awk -v n="$n" '{printf "    %5.0f %s\n", $1 / n, $2}' | head -8
fi
# What a launcher pod pays: a fresh libvirtd whose capability cache is filled (the node agent
# seeds it) starting its first domain.
kill "$lpid"
while kill -0 "$lpid" 2>/dev/null; do sleep 0.01; done
rm -f "$root/run/libvirt/libvirt-sock"
t0=$(date +%s%N)
chroot "$root" /usr/sbin/libvirtd -d --config /etc/libvirt/libvirtd.conf
for _ in $(seq 1000); do [[ -S $root/run/libvirt/libvirt-sock ]] && break; sleep 0.005; done
lpid=$(pgrep -x libvirtd)
virsh start --paused cost >/dev/null
t1=$(date +%s%N)
l=$(ticks "$lpid") q=$(ticks "$(pgrep -f 'qemu-system-x86_64.*cost')")
virsh destroy cost >/dev/null
awk -v w=$(((t1 - t0) / 1000000)) -v l="$l" -v q="$q" -v hz="$hz" 'BEGIN {
	printf "  a fresh libvirtd (capability cache filled) to its first domain started: wall %d ms, libvirtd %.3f CPU-s, QEMU %.3f CPU-s\n", w, l / hz, q / hz }'
virsh undefine cost >/dev/null
INNER
}

for r in $(seq "$rounds"); do
	for v in "${variants[@]}"; do
		base=$top/$v/base
		[[ -x $base/usr/sbin/libvirtd ]] || nv_die "start-cost: $base is no launcher rootfs"
		echo "$v (round $r of $rounds):"
		one "$base" "$n" "${QMP:-0}"
	done
done

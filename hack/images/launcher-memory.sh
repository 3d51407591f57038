#!/usr/bin/env bash
# Measures the memory of a launcher's processes without a cluster: nativevirt-launcher (built
# from this tree) runs in the launcher rootfs that build-launcher.sh made (chroot, private mount
# and PID namespaces, tmpfs over every directory it writes), starts its libvirtd, and the demo
# guest (128 MiB, 1 vCPU, the demo disk, serial console, VNC and VGA as the converter makes them;
# no network interface) boots for START_MEMORY_SECONDS; then the PSS (and its anonymous part) of
# each process from /proc/<pid>/smaps_rollup, and QEMU's largest mappings (the guest's RAM, the
# TCG translation cache). The vm-memory suite of `make bench` measures the same in a real pod.
#
#   hack/images/launcher-memory.sh [VARIANT]   the launcher rootfs (default trixie-backports)
#   VIRTLOGD=1: also run virtlogd (the launcher's --virtlogd); TB_CACHE=<MiB>|none: the domain's
#   TCG translation cache (default: the converter's, convert.TCGTranslationCacheMiB = 32)
#   START_MEMORY_SECONDS=25
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
[[ $(id -u) -eq 0 ]] || nv_die "launcher-memory: needs root (chroot, namespaces)"
variant=${1:-trixie-backports}
root=$NV_ROOT/_output/images/launcher/$variant/base
disk=$NV_ROOT/_output/images/demo-disk/disk.img
[[ -x $root/usr/sbin/libvirtd ]] || nv_die "launcher-memory: no launcher rootfs at $root (hack/images/build-launcher.sh)"
[[ -f $disk ]] || nv_die "launcher-memory: no demo disk at $disk (hack/images/build-demo-disk.sh)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$NV_ROOT" && go build -o "$tmp/nativevirt-launcher" ./cmd/nativevirt-launcher)
cp "$disk" "$tmp/disk.img"
tb=${TB_CACHE:-32}
tcg="<tcg><tb-cache unit='MiB'>$tb</tb-cache></tcg>"
[[ $tb == none ]] && tcg=
cat >"$tmp/dom.xml" <<XML
<domain type='qemu'><name>memory</name><memory unit='MiB'>128</memory><vcpu placement='static'>1</vcpu>
<os><type arch='x86_64' machine='q35'>hvm</type></os><features><acpi/>$tcg</features>
<cpu><topology sockets='1' dies='1' cores='1' threads='1'/></cpu><clock offset='utc'/>
<on_poweroff>destroy</on_poweroff><on_reboot>restart</on_reboot><on_crash>destroy</on_crash>
<devices><emulator>/usr/bin/qemu-system-x86_64</emulator>
<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='/var/run/nativevirt-disks/disk.img'/><target dev='vda' bus='virtio'/></disk>
<controller type='usb' index='0' model='none'/>
<serial type='pty'><target port='0'/><log file='/var/run/nativevirt/serial.log' append='on'/></serial>
<console type='pty'><target type='serial' port='0'/></console>
<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>
<graphics type='vnc'><listen type='socket' socket='/var/run/nativevirt/vnc.sock'/></graphics>
<video><model type='vga' heads='1'/></video>
<memballoon model='virtio'><stats period='10'/></memballoon></devices></domain>
XML

unshare -m -p -f --mount-proc --propagation private bash -s "$root" "$tmp" "${VIRTLOGD:-0}" "${START_MEMORY_SECONDS:-25}" <<'INNER'
set -euo pipefail
root=$1 tmp=$2 virtlogd=$3 secs=$4
mount --rbind "$root" "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
# The guest's serial console is a pty, as in a container: a devpts of its own.
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
mount --bind "$root/dev/pts/ptmx" "$root/dev/ptmx"
for d in run tmp var/lib/libvirt var/cache/libvirt var/log etc/libvirt mnt; do
	mount -t tmpfs tmpfs "$root/$d"
done
mkdir -p "$root/run/nativevirt" "$root/run/nativevirt-disks" "$root/run/lock"
cp "$tmp/nativevirt-launcher" "$root/mnt/"
cp "$tmp/disk.img" "$root/run/nativevirt-disks/disk.img"
cp "$tmp/dom.xml" "$root/tmp/dom.xml"
args=(--namespace bench --name memory --uid memory --run-dir /var/run/nativevirt)
[[ $virtlogd == 1 ]] && args+=(--virtlogd /usr/sbin/virtlogd)
launch() {
	chroot "$root" /mnt/nativevirt-launcher "${args[@]}" >>"$tmp/launcher.log" 2>&1 &
	lpid=$!
	for _ in $(seq 100); do [[ -e $root/run/nativevirt/ready ]] && break; sleep 0.1; done
	[[ -e $root/run/nativevirt/ready ]] || { tail -20 "$tmp/launcher.log"; exit 1; }
}
virsh() { chroot "$root" /usr/bin/virsh -q -c 'qemu+unix:///system?socket=/var/run/nativevirt/libvirt/libvirt-sock' "$@"; }
# In a cluster the node agent seeds each launcher's libvirt with the node's QEMU capabilities
# (probed once per node): a first launcher probes them here, the measured one finds them cached.
launch
virsh domcapabilities >/dev/null
kill -TERM "$lpid"
wait "$lpid" || true
launch
echo "  $(virsh version --daemon | grep -E 'daemon|hypervisor' | tr -s ' \n' ' ')"
virsh define /tmp/dom.xml >/dev/null
virsh start memory >/dev/null
sleep "$secs"
echo "  guest's console: $(tail -c 200 "$root/run/nativevirt/serial.log" | tr -d '\r' | tail -1)"
total=0 total_rss=0
for name in nativevirt-laun libvirtd virtlogd qemu-system-x86; do
	for pid in $(pgrep -x "$name"); do
		read -r rss pss anon < <(awk '/^Rss:/{r=$2} /^Pss:/{p=$2} /^Pss_Anon:/{a=$2} END{print r, p, a}' "/proc/$pid/smaps_rollup")
		total=$((total + pss)) total_rss=$((total_rss + rss))
		printf '  %-16s PSS %6.1f MiB (anonymous %6.1f MiB), RSS %6.1f MiB\n' "$name" "$(bc <<<"scale=1; $pss/1024")" \
			"$(bc <<<"scale=1; $anon/1024")" "$(bc <<<"scale=1; $rss/1024")"
	done
done
printf '  %-16s PSS %6.1f MiB, RSS %6.1f MiB; minus the guest RAM (128 MiB): PSS %.1f MiB, RSS %.1f MiB\n' "total" \
	"$(bc <<<"scale=1; $total/1024")" "$(bc <<<"scale=1; $total_rss/1024")" "$(bc <<<"scale=1; $total/1024-128")" "$(bc <<<"scale=1; $total_rss/1024-128")"
qpid=$(pgrep -x qemu-system-x86)
echo "  QEMU's largest mappings (size, resident):"
awk '/^[0-9a-f]+-[0-9a-f]+ /{split($1,r,"-"); name=($6==""?"[anon]":$6); n++; start[n]=r[1]; end[n]=r[2]; nm[n]=name}
	/^Rss:/{rss[n]=$2} END{for(i=1;i<=n;i++) print rss[i], start[i], end[i], nm[i]}' "/proc/$qpid/smaps" |
	sort -rn | head -4 | while read -r rss s e name; do
		printf '    %6d MiB %-12s resident %6.1f MiB\n' $(((16#$e - 16#$s) >> 20)) "${name##*/}" "$(bc <<<"scale=1; $rss/1024")"
	done
virsh destroy memory >/dev/null
INNER

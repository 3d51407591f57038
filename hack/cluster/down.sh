#!/usr/bin/env bash
# Stops the local cluster started by hack/cluster/up.sh, all of its nodes, and removes what it
# left on the machine: processes (by PID), containers and their shims (of our containerds only),
# kube-proxy's nftables tables and our own, the sysctls changed (restored), mounts under our
# directories, bridge nv0 with its veths, network namespaces, the nodes' cgroups and the runtime
# state in /run/nativevirt. Safe to run when nothing is up.
#
#   hack/cluster/down.sh          # or: make down
#   WIPE=1 hack/cluster/down.sh   # also delete the persisted state (etcd, PKI, images, kubelet)
# shellcheck disable=SC2086,SC2116 # lists of names and PIDs are split into words on purpose.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"
source "$HERE/node.sh"
source "$HERE/addons.sh"
source "$HERE/multus.sh"

[[ $(id -u) -eq 0 ]] || nv_die "stopping the local cluster needs root"

# our_mounts: mount points under our directories, most recent first (children before parents).
our_mounts() {
	awk '{print $5}' /proc/self/mountinfo | while read -r m; do
		m=$(printf '%b' "$m") # mountinfo escapes spaces and such as octal
		case $m in
		"$NV_LOCAL_DIR" | "$NV_LOCAL_DIR"/* | "$NV_RUN_DIR" | "$NV_RUN_DIR"/*) echo "$m" ;;
		esac
	done | tac
}

# kill_pids SIGNAL PID...: signal the given processes, ignoring those already gone.
kill_pids() {
	local sig=$1 pid
	shift
	for pid in "$@"; do
		kill "-$sig" "$pid" 2>/dev/null || true
	done
}

# pod_pids: processes in the pod cgroups of our kubelets (left behind by a killed shim): below
# /kubepods (the first node) or /nativevirt-<node>/kubepods.
pod_pids() {
	local f
	for f in /proc/[0-9]*/cgroup; do
		grep -qsE ':/(nativevirt-[^/]+/)?kubepods' "$f" && basename "$(dirname "$f")"
	done
}

# shim_pids: containerd shims started by OUR containerds (they carry the socket path, which is
# under $NV_RUN_DIR).
shim_pids() {
	ps -eo pid=,args= | awk -v dir="$NV_RUN_DIR/" \
		'$2 ~ /containerd-shim/ && index($0, " " dir) {print $1}'
}

# recorded NAME_PREFIX: the processes with a pidfile whose name starts with NAME_PREFIX.
recorded() {
	local f
	for f in "$NV_PIDS/$1"*.pid; do
		[[ -e $f ]] && basename "$f" .pid
	done
	return 0
}

# kill_containers SOCKET: kill and delete every task of the containerd at SOCKET.
kill_containers() {
	local sock=$1 tasks t
	tasks=$(nv_ctr_at "$sock" tasks ls -q 2>/dev/null || true)
	[[ -n $tasks ]] || return 0
	nv_log "killing $(wc -w <<<"$tasks") containers of $sock"
	for t in $tasks; do
		nv_ctr_at "$sock" tasks kill --signal SIGKILL "$t" >/dev/null 2>&1 || true
	done
	# The CRI plugin deletes a task as soon as it exits; delete those it has not got to.
	for _ in $(seq 1 50); do
		[[ -z $(nv_ctr_at "$sock" tasks ls -q 2>/dev/null) ]] && break
		sleep 0.1
	done
	for t in $(nv_ctr_at "$sock" tasks ls -q 2>/dev/null); do
		nv_ctr_at "$sock" tasks delete --force "$t" >/dev/null 2>&1 || true
	done
}

# kube-proxy first: the rules it made go with it (nftables tables ip/ip6 kube-proxy), and so do
# our forwarding settings.
nv_stop kube-proxy
nv_kube_proxy_cleanup
nv_host_forwarding_down

kubelets=$(recorded kubelet)
nv_log "stopping $(echo $kubelets), scheduler, controller-manager"
nv_stop $kubelets kube-scheduler kube-controller-manager

containerds=$(recorded containerd)
for name in $containerds; do
	sock=$NV_RUN_DIR/${name#containerd-}/containerd.sock
	# The single node of a cluster started before nodes had names of their own.
	[[ $name == containerd ]] && sock=$NV_RUN_DIR/containerd.sock
	if nv_running "$name" && nv_ctr_at "$sock" version >/dev/null 2>&1; then
		kill_containers "$sock"
	fi
done
nv_stop $containerds
nv_kubelet_iptables_cleanup

shims=$(shim_pids)
if [[ -n $shims ]]; then
	nv_log "killing leftover shims of our containerd: $shims"
	kill_pids KILL $shims
fi
pods=$(pod_pids)
if [[ -n $pods ]]; then
	nv_log "killing leftover pod processes: $(echo $pods)"
	kill_pids KILL $pods
fi

# kube-apiserver first: stopped together with etcd, its shutdown waits on it for ~10 s.
nv_stop kube-apiserver
nv_stop etcd

# Anything still recorded in a pidfile (a process added to the cluster later, say).
for f in "$NV_PIDS"/*.pid; do
	[[ -e $f ]] && nv_stop "$(basename "$f" .pid)"
done

for attempt in 1 2 3; do
	mounts=$(our_mounts)
	[[ -z $mounts ]] && break
	[[ $attempt -eq 1 ]] && nv_log "unmounting $(wc -l <<<"$mounts") mounts under $NV_LOCAL_DIR and $NV_RUN_DIR"
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done <<<"$mounts"
done

if ip link show "$NV_BRIDGE" >/dev/null 2>&1; then
	for veth in $(ip -o link show master "$NV_BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
		ip link delete "$veth" 2>/dev/null || true
	done
	ip link delete "$NV_BRIDGE"
	nv_log "deleted bridge $NV_BRIDGE"
fi

nv_multus_bridges_down

# Runtime state and the CNI plugins' result cache of our network (its netns are gone).
rm -rf "$NV_RUN_DIR"
rm -f /var/lib/cni/results/"$NV_CNI_NETWORK"-* /var/lib/cni/results/multus-cni-network-*
# The CRI's loopback results carry no network of ours in their names: removed only when no other
# containerd runs on the machine (ours are stopped by now).
if ! pgrep -x containerd >/dev/null; then
	rm -f /var/lib/cni/results/cni-loopback-*
fi
rmdir /run/containerd/s /run/containerd /var/lib/cni/results /var/lib/cni 2>/dev/null || true

# The kubelets' pod cgroups (cgroupfs driver) and the nodes' cgroup roots, deepest first; busy
# ones stay.
for hier in $(findmnt -n -l -t cgroup,cgroup2 -o TARGET); do
	for d in "$hier"/kubepods "$hier"/nativevirt-*; do
		[[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
done

if [[ ${WIPE:-0} == 1 ]]; then
	nv_log "WIPE=1: deleting the state in $NV_LOCAL_DIR"
	# The kubelet's log symlinks pointing into our pod logs.
	for l in /var/log/containers/*.log; do
		[[ -L $l && $(readlink "$l") == "$NV_LOCAL_DIR"/* ]] && rm -f "$l"
	done
	# Only what up.sh creates, never NV_LOCAL_DIR wholesale (it may be overridden).
	# containerd, kubelet, cni and pod-logs: the layout of a single node before nodes/ existed.
	rm -rf "$NV_LOCAL_DIR"/{etcd,pki,kubeconfigs,kubeconfig,nodes,containerd,kubelet,cni,pod-logs,pids,logs,kube-proxy.yaml}
	rmdir "$NV_LOCAL_DIR" 2>/dev/null || true
fi
nv_log "down"

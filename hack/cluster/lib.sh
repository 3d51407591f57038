#!/usr/bin/env bash
# Shared settings and helpers of the local Kubernetes (hack/cluster/up.sh, down.sh): one control
# plane and NV_NODES kubelet nodes on this machine. Sourced, never run. Every path and address of
# the cluster is defined here, once.

# shellcheck disable=SC2034 # sourced: the scripts that source lib.sh use the variables it sets.
NV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NV_BIN=${NV_BIN_DIR:-$NV_ROOT/_output/bin}
# Persisted state (PKI, etcd data, containerd images, kubelet root, logs). WIPE=1 down.sh deletes it.
NV_LOCAL_DIR=${NV_LOCAL_DIR:-$NV_ROOT/_output/local}
NV_LOGS=$NV_LOCAL_DIR/logs
NV_PIDS=$NV_LOCAL_DIR/pids
NV_PKI=$NV_LOCAL_DIR/pki
NV_KUBECONFIGS=$NV_LOCAL_DIR/kubeconfigs
NV_KUBECONFIG=$NV_LOCAL_DIR/kubeconfig
# Runtime state that must not outlive the cluster (sockets, runc state, netns, IPAM): tmpfs.
# Kept short: unix socket paths are limited to 108 bytes.
NV_RUN_DIR=/run/nativevirt

# Network: pods live on bridge nv0; kube-apiserver listens on the bridge's address, so that pods
# reach it directly as well as through the kubernetes Service (10.96.0.1:443, kube-proxy).
NV_BRIDGE=nv0
# NV_BRIDGE_MAC is the bridge's fixed (locally administered) MAC.
NV_BRIDGE_MAC=02:88:00:00:00:01
NV_BRIDGE_IP=10.88.0.1
NV_POD_CIDR=10.88.0.0/16
NV_SERVICE_CIDR=10.96.0.0/24
NV_SERVICE_IP=10.96.0.1
# Cluster DNS: CoreDNS behind the kube-dns Service at this address (the kubelets' clusterDNS).
NV_DNS_IP=10.96.0.10
NV_CLUSTER_DOMAIN=cluster.local
# NodePorts are served on the host's addresses in this range: the bridge's and the nodes'.
NV_NODEPORT_ADDRESSES=10.88.0.0/24
NV_API_PORT=6443
NV_API_URL=https://$NV_BRIDGE_IP:$NV_API_PORT
NV_CNI_NETWORK=nativevirt
# etcd on non-default ports so that a system etcd (or someone else's) does not clash.
NV_ETCD_CLIENT_PORT=12379
NV_ETCD_PEER_PORT=12380
NV_ETCD_METRICS_PORT=12381

NV_PAUSE_IMAGE=localhost/pause:dev

# Nodes. up.sh starts NV_NODES of them (default 1; `make run NODES=2`); the other scripts act on
# the nodes that exist. Each node is a containerd and a kubelet of its own; node I (1-based) has
#   name      localhost (I=1), localhost2, localhost3, ...
#   address   10.88.0.(1+I) on nv0: its kubelet (10250, healthz 10248) and the node agent (8186)
#             listen there, and kube-apiserver reaches the kubelet there (InternalIP)
#   pods      10.88.I.1-10.88.I.254 of the bridge network (host-local IPAM)
#   state     $NV_NODES_DIR/<name>/: containerd/ (images), kubelet/ (--root-dir, with its
#             device-plugins/), pod-logs/, handler/ (the node agent's checkpoints)
#   runtime   $NV_RUN_DIR/<name>/: containerd.sock, containerd state, runc state, netns, IPAM
#   cgroups   pods under /kubepods for node 1 (as a single node always had), under
#             /nativevirt-<name>/kubepods for the others: a kubelet removes pod cgroups it does not
#             know below its own root, so two kubelets never share one
#   processes containerd-<name>, kubelet-<name> (logs/ and pids/ use these names)
NV_NODES=${NV_NODES:-1}
NV_MAX_NODES=8
NV_NODES_DIR=$NV_LOCAL_DIR/nodes
# The first node; single-node scripts and tests may name it.
NV_NODE_NAME=localhost
NV_CONTAINERD_SOCK=$NV_RUN_DIR/$NV_NODE_NAME/containerd.sock

# Test users without groups for RBAC matrix tests; each gets a token and a kubeconfig in
# $NV_KUBECONFIGS/<user>.kubeconfig. Extend freely: up.sh adds missing users to the token file
# (kube-apiserver reads it at start, so a running cluster needs a down/up to see new ones).
NV_TEST_USERS=(nv-nobody nv-viewer nv-editor nv-admin)

# The processes of the control plane, in start order; each node adds containerd-<name> and
# kubelet-<name> (nv_procs), and the machine one kube-proxy for all nodes (hack/cluster/addons.sh
# says why one).
NV_CONTROL_PLANE_PROCS=(etcd kube-apiserver kube-controller-manager kube-scheduler)
NV_HOST_PROCS=(kube-proxy)

export PATH=/usr/local/go/bin:$NV_BIN:/usr/sbin:/sbin:$PATH

nv_t0=${nv_t0:-$(date +%s)}

# nv_log MSG...: a line prefixed with the seconds since the script started.
nv_log() {
	echo "[+$(($(date +%s) - nv_t0))s] $*"
}

# nv_die MSG...: print to stderr and exit 1.
nv_die() {
	echo "error: $*" >&2
	exit 1
}

nv_step_names=()
nv_step_secs=()
nv_step_started=0

# nv_step NAME: start timing a step (closing the previous one); nv_step_end closes the last one.
nv_step() {
	nv_step_end
	nv_step_names+=("$1")
	nv_step_started=$(date +%s)
	nv_log "$1"
}

nv_step_end() {
	if [[ $nv_step_started -ne 0 ]]; then
		nv_step_secs+=($(($(date +%s) - nv_step_started)))
		nv_step_started=0
	fi
}

# nv_step_report: one line per step with its duration.
nv_step_report() {
	nv_step_end
	local i
	echo "step timings:"
	for i in "${!nv_step_names[@]}"; do
		printf '  %-32s %4ss\n' "${nv_step_names[$i]}" "${nv_step_secs[$i]}"
	done
	printf '  %-32s %4ss\n' total $(($(date +%s) - nv_t0))
}

# nv_pid NAME: the PID recorded for NAME if that process is still alive and still runs the
# same executable (guards against PID reuse); empty otherwise.
nv_pid() {
	local f=$NV_PIDS/$1.pid pid exe
	[[ -f $f ]] || return 0
	pid=$(<"$f")
	[[ $pid =~ ^[0-9]+$ ]] || return 0
	exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 0
	[[ -f $NV_PIDS/$1.exe && $(<"$NV_PIDS/$1.exe") == "$exe" ]] || return 0
	echo "$pid"
}

# nv_running NAME: true when NAME runs.
nv_running() {
	[[ -n $(nv_pid "$1") ]]
}

# nv_start NAME CMD...: start CMD in its own session, output appended to $NV_LOGS/NAME.log,
# PID in $NV_PIDS/NAME.pid. No-op when NAME already runs. When CMD is a wrapper that ends by
# exec'ing the real program, NV_EXE names that program (the executable NAME is known by).
nv_start() {
	local name=$1
	shift
	if nv_running "$name"; then
		nv_log "$name already running (pid $(nv_pid "$name"))"
		return 0
	fi
	mkdir -p "$NV_LOGS" "$NV_PIDS"
	echo "=== $(date -u +%FT%TZ) start: $*" >>"$NV_LOGS/$name.log"
	setsid "$@" >>"$NV_LOGS/$name.log" 2>&1 </dev/null &
	local pid=$!
	echo "$pid" >"$NV_PIDS/$name.pid"
	# The executable is recorded to recognise this process later (nv_pid); the forked shell
	# execs setsid, which execs the command in place, so the PID stays the same.
	local want exe=""
	want=$(readlink -f "$(command -v "${NV_EXE:-$1}")")
	for _ in $(seq 1 100); do
		exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || break
		[[ $exe == "$want" ]] && break
		sleep 0.02
	done
	if [[ $exe != "$want" ]]; then
		tail -20 "$NV_LOGS/$name.log" >&2
		nv_die "$name did not start; see $NV_LOGS/$name.log"
	fi
	echo "$exe" >"$NV_PIDS/$name.exe"
	nv_log "$name started (pid $pid, log $NV_LOGS/$name.log)"
}

# nv_stop NAME...: SIGTERM to each, wait up to $NV_STOP_GRACE seconds (default 15) for all of
# them together, then SIGKILL those left.
nv_stop() {
	local grace=${NV_STOP_GRACE:-15} name pid i
	local -A pids=()
	for name in "$@"; do
		pid=$(nv_pid "$name")
		if [[ -n $pid ]]; then
			pids[$name]=$pid
			kill -TERM "$pid" 2>/dev/null || true
		fi
	done
	for ((i = 0; i < grace * 10 && ${#pids[@]} > 0; i++)); do
		for name in "${!pids[@]}"; do
			if ! kill -0 "${pids[$name]}" 2>/dev/null; then
				nv_log "$name stopped (pid ${pids[$name]})"
				unset "pids[$name]"
			fi
		done
		[[ ${#pids[@]} -gt 0 ]] && sleep 0.1
	done
	for name in "${!pids[@]}"; do
		nv_log "$name (pid ${pids[$name]}) ignored SIGTERM for ${grace}s: SIGKILL"
		kill -KILL "${pids[$name]}" 2>/dev/null || true
	done
	for name in "$@"; do
		rm -f "$NV_PIDS/$name.pid" "$NV_PIDS/$name.exe"
	done
}

# nv_wait_for SECONDS WHAT CMD...: poll CMD every second until it succeeds; fail after SECONDS.
nv_wait_for() {
	local secs=$1 what=$2
	shift 2
	local deadline=$(($(date +%s) + secs))
	until "$@" >/dev/null 2>&1; do
		if [[ $(date +%s) -ge $deadline ]]; then
			echo "timed out after ${secs}s waiting for $what" >&2
			return 1
		fi
		sleep 1
	done
}

# nv_kubectl ARGS...: kubectl as the cluster admin.
nv_kubectl() {
	"$NV_BIN/kubectl" --kubeconfig "$NV_KUBECONFIG" "$@"
}

# nv_ctr ARGS...: ctr against the first node's containerd (see nv_ctr_at for the others).
nv_ctr() {
	nv_ctr_at "$NV_CONTAINERD_SOCK" "$@"
}

# nv_token USER: the bearer token of USER from the token file.
nv_token() {
	awk -F, -v u="$1" '$2 == u {print $1; exit}' "$NV_PKI/tokens.csv"
}

# nv_check_nodes: NV_NODES is a node count this cluster supports.
nv_check_nodes() {
	[[ $NV_NODES =~ ^[1-9][0-9]*$ && $NV_NODES -le $NV_MAX_NODES ]] ||
		nv_die "NV_NODES (NODES) must be a number from 1 to $NV_MAX_NODES, not '$NV_NODES'"
}

# nv_check_disk: refuses to start a cluster on a nearly full disk. The kubelets evict pods and
# garbage-collect the locally imported images (there is no registry to pull them back from) when
# the node's filesystem runs out, which fails every later step with puzzling errors (pause image
# not found, untolerated disk-pressure taints); better one clear message up front.
# NV_MIN_FREE_GIB (default 5) is the free space wanted where the cluster keeps its state.
nv_check_disk() {
	local want=${NV_MIN_FREE_GIB:-5} dir=$NV_LOCAL_DIR free
	while [[ ! -d $dir ]]; do dir=$(dirname "$dir"); done
	free=$(df --output=avail -B1G "$dir" | tail -1 | tr -d ' ')
	[[ $free -ge $want ]] ||
		nv_die "only ${free} GiB free on the filesystem of $dir (want ${want} GiB, NV_MIN_FREE_GIB): free some space first; kubelets evict pods and drop the local images when the disk runs full"
}

# nv_node_name I: the name of node I (1-based).
nv_node_name() {
	if [[ $1 == 1 ]]; then echo "$NV_NODE_NAME"; else echo "localhost$1"; fi
}

# nv_node_names: the names of nodes 1..NV_NODES.
nv_node_names() {
	local i
	for ((i = 1; i <= NV_NODES; i++)); do
		nv_node_name "$i"
	done
}

# nv_node I: sets the variables of node I that the node functions (node.sh) use:
# nv_n_name, nv_n_ip, nv_n_dir, nv_n_run, nv_n_sock, nv_n_kubelet_dir, nv_n_cgroup_root,
# nv_n_pods_first, nv_n_pods_last.
nv_node() {
	local i=$1
	nv_n_name=$(nv_node_name "$i")
	nv_n_ip=${NV_BRIDGE_IP%.*}.$((1 + i))
	nv_n_dir=$NV_NODES_DIR/$nv_n_name
	nv_n_run=$NV_RUN_DIR/$nv_n_name
	nv_n_sock=$nv_n_run/containerd.sock
	nv_n_kubelet_dir=$nv_n_dir/kubelet
	if [[ $i == 1 ]]; then nv_n_cgroup_root=/; else nv_n_cgroup_root=/nativevirt-$nv_n_name; fi
	nv_n_pods_first=${NV_POD_CIDR%%.0.0/*}.$i.1
	nv_n_pods_last=${NV_POD_CIDR%%.0.0/*}.$i.254
}

# nv_procs: every process of a cluster of NV_NODES nodes, in start order.
nv_procs() {
	local n
	printf '%s\n' "${NV_CONTROL_PLANE_PROCS[@]}"
	for n in $(nv_node_names); do
		printf '%s\n' "containerd-$n" "kubelet-$n"
	done
	printf '%s\n' "${NV_HOST_PROCS[@]}"
}

# nv_ctr_at SOCKET ARGS...: ctr against the containerd at SOCKET, in the namespace the CRI uses.
nv_ctr_at() {
	local sock=$1
	shift
	ctr --address "$sock" --namespace k8s.io "$@"
}

# nv_containerd_socks: the sockets of the nodes' containerds that run now.
nv_containerd_socks() {
	local s
	for s in "$NV_RUN_DIR"/*/containerd.sock; do
		[[ -S $s ]] && echo "$s"
	done
	return 0
}

#!/usr/bin/env bash
# The nodes of the local cluster: per node a private containerd (Debian 1.6) with runc and the
# CNI bridge, the pause image, and a kubelet in a mount namespace of its own. Sourced after
# lib.sh and pki.sh, never run. The functions taking no node act on the node that nv_node
# selected last (the nv_n_* variables; lib.sh describes the layout).

# shellcheck disable=SC2154 # the nv_n_* variables are set by nv_node (lib.sh).

# Kubelets hard-code their device plugin directory (the registration socket kubelet.sock, and
# the plugins' sockets beside it). Each kubelet runs in a mount namespace of its own where its
# node's <root-dir>/device-plugins is bind-mounted there (hack/cluster/kubelet-ns.sh), so the
# node agent of a node finds them under the kubelet root, as with a kubelet in /var/lib/kubelet.
NV_DEVICE_PLUGIN_DIR=/var/lib/kubelet/device-plugins

# nv_nodes_mount: $NV_NODES_DIR as a shared mount of its own. The kubelets run in their own mount
# namespaces: the volumes they mount under their root directories must propagate to the host,
# where containerd gives them to containers, and on into the node agents' HostToContainer mounts.
nv_nodes_mount() {
	mkdir -p "$NV_NODES_DIR"
	if ! mountpoint -q "$NV_NODES_DIR"; then
		mount --bind "$NV_NODES_DIR" "$NV_NODES_DIR"
	fi
	mount --make-rshared "$NV_NODES_DIR"
}

# nv_containerd_config: containerd's config. Every path is private so that a containerd of the
# machine (if any), and the other nodes' ones, are left alone: root under the node's directory,
# state, socket, runc state and network namespaces under its runtime directory. The only path
# containerd 1.6 does not let us move is its shims' socket directory /run/containerd/s (the
# sockets' names are hashes of the containerd socket's path: they do not clash).
nv_containerd_config() {
	mkdir -p "$nv_n_dir/containerd" "$nv_n_run"
	cat >"$nv_n_dir/containerd/config.toml" <<EOF
version = 2
root = "$nv_n_dir/containerd/root"
state = "$nv_n_run/containerd"
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$nv_n_sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "$nv_n_dir/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$NV_PAUSE_IMAGE"
  # The sandbox lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj (pause wants -998) and
  # fails with "can't get final child's PID from pipe: EOF" unless this is set.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$NV_CNI_BIN"
    conf_dir = "$nv_n_dir/cni"
    max_conf_num = 1

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$nv_n_run/runc"
        SystemdCgroup = false
EOF
}

# nv_cni_config: the node's share of the bridge network on nv0: the node's pod range of the one
# subnet, so that pods of all nodes are neighbours on the bridge. Addresses stay inside this
# machine: no masquerade, and no routes beyond the pod subnet but the Service range's, through
# the host (kube-proxy); IPAM state is kept in the node's runtime directory.
nv_cni_config() {
	mkdir -p "$nv_n_dir/cni"
	cat >"$nv_n_dir/cni/10-$NV_CNI_NETWORK.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$NV_CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$NV_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$nv_n_run/ipam",
        "ranges": [[{"subnet": "$NV_POD_CIDR", "gateway": "$NV_BRIDGE_IP",
                     "rangeStart": "$nv_n_pods_first", "rangeEnd": "$nv_n_pods_last"}]],
        "routes": [{"dst": "$NV_SERVICE_CIDR", "gw": "$NV_BRIDGE_IP"}]
      }
    }
  ]
}
EOF
}

# nv_containerd_up: the node's containerd with the CRI plugin for its kubelet.
nv_containerd_up() {
	if ! nv_running "containerd-$nv_n_name"; then
		nv_containerd_config
		nv_cni_config
		nv_multus_config
	fi
	nv_start "containerd-$nv_n_name" containerd --config "$nv_n_dir/containerd/config.toml"
	nv_wait_for 60 "containerd of $nv_n_name" nv_ctr_at "$nv_n_sock" version
}

# nv_pause_image: the sandbox image, built from hack/images/pause and imported into every
# running containerd that lacks it.
nv_pause_image() {
	local sock
	for sock in $(nv_containerd_socks); do
		if [[ -z $(nv_ctr_at "$sock" images ls -q "name==$NV_PAUSE_IMAGE" 2>/dev/null) ]]; then
			"$NV_ROOT/hack/images/build-pause.sh" | sed 's/^/  /'
			return 0
		fi
	done
	nv_log "$NV_PAUSE_IMAGE present"
}

# nv_images_like_first_node: the image tarballs of _output/images that the first node has
# imported, imported into the other nodes that lack them (a node added to a cluster where
# NativeVirt runs needs the node agent's and the launcher's images at once). Stamps tell what a
# node has (hack/images/import.sh): nothing is hashed when the nodes agree.
nv_images_like_first_node() {
	local first=$NV_NODES_DIR/$NV_NODE_NAME/containerd/imported stamp tar n want=()
	for stamp in "$first"/*.sha256; do
		[[ -f $stamp ]] || continue
		tar=$NV_ROOT/_output/images/$(basename "$stamp" .sha256)
		[[ -f $tar ]] || continue
		for n in $(nv_node_names); do
			if ! cmp -s "$stamp" "$NV_NODES_DIR/$n/containerd/imported/$(basename "$stamp")"; then
				want+=("$tar")
				break
			fi
		done
	done
	[[ ${#want[@]} -eq 0 ]] && return 0
	"$NV_ROOT/hack/images/import.sh" "${want[@]}" | sed 's/^/  /'
}

# nv_cgroup_root: the node's cgroup root in every cgroup hierarchy (the kubelet wants it to
# exist). cgroup v1 needs its cpuset filled before anything joins it, and gets the CPU weight a
# kubelet gives /kubepods on this machine, so that pods of every node weigh the same.
nv_cgroup_root() {
	[[ $nv_n_cgroup_root == / ]] && return 0
	local hier d
	for hier in $(findmnt -n -l -t cgroup,cgroup2 -o TARGET); do
		d=$hier$nv_n_cgroup_root
		mkdir -p "$d"
		if [[ -f $d/cpuset.cpus && -z $(<"$d/cpuset.cpus") ]]; then
			cat "$hier/cpuset.cpus" >"$d/cpuset.cpus"
			cat "$hier/cpuset.mems" >"$d/cpuset.mems"
		fi
		if [[ -f $d/cpu.shares ]]; then
			echo $((1024 * $(nproc))) >"$d/cpu.shares"
		fi
	done
}

# nv_kubelet_config: the node's KubeletConfiguration. Facts of this machine kind: cgroup v1 needs
# failCgroupV1 false; cgroupfs since there is no systemd. Images are imported, not pulled, so
# image garbage collection is off (an evicted image could not come back). The kubelet listens on
# the node's own address only, so that the nodes' kubelets share the machine's ports.
nv_kubelet_config() {
	mkdir -p "$nv_n_kubelet_dir/device-plugins" "$nv_n_dir/pod-logs"
	local cgroup_root=""
	[[ $nv_n_cgroup_root == / ]] || cgroup_root="cgroupRoot: $nv_n_cgroup_root"
	cat >"$nv_n_dir/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $nv_n_ip
port: 10250
readOnlyPort: 0
healthzBindAddress: $nv_n_ip
healthzPort: 10248
cgroupDriver: cgroupfs
$cgroup_root
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$nv_n_sock
podLogsDir: $nv_n_dir/pod-logs
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $NV_PKI/ca.crt
authorization:
  mode: Webhook
clusterDomain: $NV_CLUSTER_DOMAIN
clusterDNS:
- $NV_DNS_IP
resolvConf: /etc/resolv.conf
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
registerNode: true
EOF
}

# Seconds-resolution start times of the kubelets started by this run, by node name: after a
# restart only a heartbeat of the new kubelet counts.
declare -A NV_KUBELET_STARTED=()

# nv_kubelet_up: the node's kubelet (hack/cluster/kubelet-ns.sh), with the node's address as its
# InternalIP, which is how kube-apiserver reaches it (logs, exec). The kubelet refuses a loopback
# node IP; a node address on the bridge also lets pods reach the node agent there.
nv_kubelet_up() {
	if ! nv_running "kubelet-$nv_n_name"; then
		nv_cgroup_root
		nv_kubelet_config
		mkdir -p "$NV_DEVICE_PLUGIN_DIR"
		NV_KUBELET_STARTED[$nv_n_name]=$(date +%s)
	fi
	NV_EXE=$NV_BIN/kubelet nv_start "kubelet-$nv_n_name" \
		unshare --mount --propagation unchanged -- \
		"$NV_ROOT/hack/cluster/kubelet-ns.sh" "$nv_n_kubelet_dir/device-plugins" "$NV_DEVICE_PLUGIN_DIR" \
		"$NV_BIN/kubelet" \
		--config="$nv_n_dir/kubelet.yaml" \
		--kubeconfig="$NV_KUBECONFIGS/kubelet-$nv_n_name.kubeconfig" \
		--root-dir="$nv_n_kubelet_dir" --cert-dir="$nv_n_kubelet_dir/pki" \
		--hostname-override="$nv_n_name" --node-ip="$nv_n_ip" \
		--v=1
}

# nv_node_ready: wait until the node is Ready and untainted.
nv_node_ready() {
	nv_wait_for 60 "kubelet healthz of $nv_n_name" curl -sf "http://$nv_n_ip:10248/healthz"
	nv_wait_for 180 "node $nv_n_name Ready" nv_node_ready_since "$nv_n_name" "${NV_KUBELET_STARTED[$nv_n_name]:-0}"
	nv_wait_for 120 "node $nv_n_name untainted" nv_node_untainted "$nv_n_name"
}

# nv_default_namespace_ready: pods can be created in "default" (its ServiceAccount and
# kube-root-ca.crt exist).
nv_default_namespace_ready() {
	nv_wait_for 120 "ServiceAccount default/default" nv_kubectl -n default get serviceaccount default
	nv_wait_for 120 "ConfigMap default/kube-root-ca.crt" nv_kubectl -n default get configmap kube-root-ca.crt
}

# nv_node_ready_since NODE EPOCH: the node's Ready condition is True with a heartbeat at or after EPOCH.
nv_node_ready_since() {
	local out status beat
	out=$(nv_kubectl get node "$1" \
		-o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}') || return 1
	read -r status beat <<<"$out"
	[[ $status == True && -n $beat && $(date -d "$beat" +%s) -ge $2 ]]
}

# nv_node_untainted NODE: the node has no taints.
nv_node_untainted() {
	local taints
	taints=$(nv_kubectl get node "$1" -o 'jsonpath={.spec.taints}') || return 1
	[[ -z $taints ]]
}

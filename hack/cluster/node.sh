#!/usr/bin/env bash
# The node of the local cluster: a private containerd (Debian 1.6) with runc and the CNI bridge,
# the pause image, and the kubelet. Sourced after lib.sh and pki.sh, never run.

NV_CONTAINERD_DIR=$NV_LOCAL_DIR/containerd
NV_CNI_CONF_DIR=$NV_LOCAL_DIR/cni/net.d
NV_KUBELET_DIR=$NV_LOCAL_DIR/kubelet

# nv_containerd_config: containerd's config. Every path is private so that a containerd of the
# machine (if any) is left alone: root under $NV_LOCAL_DIR, state, socket, runc state and network
# namespaces under $NV_RUN_DIR. The only path containerd 1.6 does not let us move is its shims'
# socket directory /run/containerd/s.
nv_containerd_config() {
	mkdir -p "$NV_CONTAINERD_DIR" "$NV_RUN_DIR" "$NV_CNI_CONF_DIR"
	cat >"$NV_CONTAINERD_DIR/config.toml" <<EOF
version = 2
root = "$NV_CONTAINERD_DIR/root"
state = "$NV_RUN_DIR/containerd"
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$NV_CONTAINERD_SOCK"

[plugins."io.containerd.internal.v1.opt"]
  path = "$NV_CONTAINERD_DIR/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$NV_PAUSE_IMAGE"
  # The sandbox lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj (pause wants -998) and
  # fails with "can't get final child's PID from pipe: EOF" unless this is set.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NV_CNI_CONF_DIR"
    max_conf_num = 1

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$NV_RUN_DIR/runc"
        SystemdCgroup = false
EOF
}

# nv_cni_config: one bridge network on nv0. Addresses stay inside this machine: no masquerade
# and no routes beyond the pod subnet; IPAM state is kept in $NV_RUN_DIR.
nv_cni_config() {
	mkdir -p "$NV_CNI_CONF_DIR"
	cat >"$NV_CNI_CONF_DIR/10-$NV_CNI_NETWORK.conflist" <<EOF
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
        "dataDir": "$NV_RUN_DIR/ipam",
        "ranges": [[{"subnet": "$NV_POD_CIDR", "gateway": "$NV_BRIDGE_IP"}]]
      }
    }
  ]
}
EOF
}

# nv_containerd_up: containerd with the CRI plugin for the kubelet.
nv_containerd_up() {
	if ! nv_running containerd; then
		nv_containerd_config
		nv_cni_config
	fi
	nv_start containerd containerd --config "$NV_CONTAINERD_DIR/config.toml"
	nv_wait_for 60 "containerd" nv_ctr version
}

# nv_pause_image: the sandbox image, built from hack/images/pause and imported when missing.
nv_pause_image() {
	if [[ -n $(nv_ctr images ls -q "name==$NV_PAUSE_IMAGE" 2>/dev/null) ]]; then
		nv_log "$NV_PAUSE_IMAGE present"
		return 0
	fi
	"$NV_ROOT/hack/images/build-pause.sh" | sed 's/^/  /'
}

# nv_kubelet_config: the KubeletConfiguration. Facts of this machine kind: cgroup v1 needs
# failCgroupV1 false; cgroupfs since there is no systemd. Images are imported, not pulled, so
# image garbage collection is off (an evicted image could not come back).
nv_kubelet_config() {
	mkdir -p "$NV_KUBELET_DIR" "$NV_LOCAL_DIR/pod-logs"
	cat >"$NV_KUBELET_DIR/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$NV_CONTAINERD_SOCK
podLogsDir: $NV_LOCAL_DIR/pod-logs
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $NV_PKI/ca.crt
authorization:
  mode: Webhook
clusterDomain: cluster.local
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

# nv_kubelet_up: the kubelet as node "localhost". It refuses a loopback node IP, so
# kube-apiserver reaches it (logs, exec) by the Hostname address: localhost:10250.
nv_kubelet_up() {
	if ! nv_running kubelet; then
		nv_kubelet_config
		# Seconds-resolution heartbeats: a status posted in this second counts as fresh.
		NV_KUBELET_STARTED=$(date +%s)
	fi
	nv_start kubelet "$NV_BIN/kubelet" \
		--config="$NV_KUBELET_DIR/config.yaml" \
		--kubeconfig="$NV_KUBECONFIGS/kubelet.kubeconfig" \
		--root-dir="$NV_KUBELET_DIR" --cert-dir="$NV_KUBELET_DIR/pki" \
		--hostname-override="$NV_NODE_NAME" \
		--v=1
}

# nv_node_ready: wait until the node is Ready and untainted and pods can be created in
# "default" (its ServiceAccount and kube-root-ca.crt exist). After a restart the node object
# still says Ready from before: only a heartbeat of the kubelet started now counts.
nv_node_ready() {
	nv_wait_for 60 "kubelet healthz" curl -sf http://127.0.0.1:10248/healthz
	nv_wait_for 180 "node $NV_NODE_NAME Ready" nv_node_ready_since "${NV_KUBELET_STARTED:-0}"
	nv_wait_for 120 "node $NV_NODE_NAME untainted" nv_node_untainted
	nv_wait_for 120 "ServiceAccount default/default" nv_kubectl -n default get serviceaccount default
	nv_wait_for 120 "ConfigMap default/kube-root-ca.crt" nv_kubectl -n default get configmap kube-root-ca.crt
}

# nv_node_ready_since EPOCH: the node's Ready condition is True with a heartbeat at or after EPOCH.
nv_node_ready_since() {
	local out status beat
	out=$(nv_kubectl get node "$NV_NODE_NAME" \
		-o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}') || return 1
	read -r status beat <<<"$out"
	[[ $status == True && -n $beat && $(date -d "$beat" +%s) -ge $1 ]]
}

nv_node_untainted() {
	local taints
	taints=$(nv_kubectl get node "$NV_NODE_NAME" -o 'jsonpath={.spec.taints}') || return 1
	[[ -z $taints ]]
}

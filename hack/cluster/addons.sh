#!/usr/bin/env bash
# What makes the local cluster a whole Kubernetes, as users have it: kube-proxy (Services),
# CoreDNS (cluster DNS) and rancher's local-path-provisioner (the default StorageClass). Sourced
# after lib.sh by up.sh and down.sh, never run.
#
# One kube-proxy for the machine, not one per node: every node of this cluster is a kubelet and a
# containerd on this host, in the host's network namespace, and so are the pods' routes (bridge
# nv0). kube-proxy programs that network namespace's netfilter tables, and the rule set for every
# node would be the same (ClusterIPs, and NodePorts on every node address); two kube-proxies would
# rewrite the same nftables table in turn. The one kube-proxy serves every node: it runs as node 1
# (localhost) for what is per node (externalTrafficPolicy/internalTrafficPolicy Local prefer
# node 1's endpoints), and serves NodePorts on every node address (NV_NODEPORT_ADDRESSES).

NV_ADDONS_DIR=$NV_ROOT/artifacts/cluster
NV_KUBE_PROXY_CONFIG=$NV_LOCAL_DIR/kube-proxy.yaml
# Host settings changed while the cluster runs; down.sh restores the values saved here.
NV_SYSCTL_SAVED=$NV_LOCAL_DIR/sysctl.saved
# An nftables table of ours: keeps forwarded traffic on nv0 (see nv_host_forwarding_up).
NV_NFT_TABLE=nativevirt-local
# Where local-path-provisioner puts node I's volumes: $NV_NODES_DIR/<name>/local-path/.
NV_LOCAL_PATH_DIR=local-path

# nv_host_forwarding_up: IPv4 forwarding on, for Service traffic from a pod to another pod
# (DNAT'ed on the host, routed back out of nv0); the previous value is saved for down.sh. A table
# of ours drops whatever would be forwarded between nv0 and any other interface: pods still have
# no way out of this machine, and nothing from outside reaches them.
nv_host_forwarding_up() {
	if [[ ! -f $NV_SYSCTL_SAVED ]]; then
		echo "net.ipv4.ip_forward=$(sysctl -n net.ipv4.ip_forward)" >"$NV_SYSCTL_SAVED"
	fi
	nft -f - <<EOF
table inet $NV_NFT_TABLE
delete table inet $NV_NFT_TABLE
table inet $NV_NFT_TABLE {
	chain forward {
		type filter hook forward priority filter; policy accept;
		iifname "$NV_BRIDGE" oifname != "$NV_BRIDGE" drop
		iifname != "$NV_BRIDGE" oifname "$NV_BRIDGE" drop
	}
}
EOF
	sysctl -q -w net.ipv4.ip_forward=1
	# Pod to Service to a pod on the same bridge: the answer is bridged, not routed, and must
	# pass conntrack to be un-NATed (kube-proxy's requirement). Built into this kernel and on;
	# say so when it is not.
	if [[ $(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null) != 1 ]]; then
		modprobe br_netfilter 2>/dev/null || true
		if [[ $(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null) != 1 ]]; then
			grep -q '^net.bridge.bridge-nf-call-iptables=' "$NV_SYSCTL_SAVED" ||
				echo "net.bridge.bridge-nf-call-iptables=$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo 0)" >>"$NV_SYSCTL_SAVED"
			sysctl -q -w net.bridge.bridge-nf-call-iptables=1 ||
				nv_log "warning: no br_netfilter: a pod may not reach a Service whose endpoint is on its own bridge"
		fi
	fi
}

# nv_host_forwarding_down: the settings saved by nv_host_forwarding_up back, our table gone.
nv_host_forwarding_down() {
	nft delete table inet "$NV_NFT_TABLE" 2>/dev/null || true
	[[ -f $NV_SYSCTL_SAVED ]] || return 0
	local kv
	while read -r kv; do
		[[ -n $kv ]] && { sysctl -q -w "$kv" || true; }
	done <"$NV_SYSCTL_SAVED"
	nv_log "restored $(tr '\n' ' ' <"$NV_SYSCTL_SAVED")"
	rm -f "$NV_SYSCTL_SAVED"
}

# nv_kube_proxy_config: nftables mode (its own tables ip/ip6 kube-proxy, which down.sh deletes).
# It leaves the host's conntrack settings alone (the zeros), and masquerades only traffic from
# outside the pod network (the host's own connections to a ClusterIP or NodePort).
nv_kube_proxy_config() {
	cat >"$NV_KUBE_PROXY_CONFIG" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection:
  kubeconfig: $NV_KUBECONFIGS/kube-proxy.kubeconfig
hostnameOverride: $NV_NODE_NAME
bindAddress: 0.0.0.0
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clusterCIDR: $NV_POD_CIDR
detectLocalMode: ClusterCIDR
nodePortAddresses:
- $NV_NODEPORT_ADDRESSES
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
  udpTimeout: 0s
  udpStreamTimeout: 0s
EOF
}

# nv_kube_proxy_up: the machine's kube-proxy, once node 1 exists (it reads its node's addresses).
nv_kube_proxy_up() {
	nv_host_forwarding_up
	nv_running kube-proxy || nv_kube_proxy_config
	nv_start kube-proxy "$NV_BIN/kube-proxy" --config="$NV_KUBE_PROXY_CONFIG" --v=1
	nv_wait_for 60 "kube-proxy healthz" curl -sf http://127.0.0.1:10256/healthz
}

# nv_kube_proxy_cleanup: kube-proxy's rules gone (after it stopped).
nv_kube_proxy_cleanup() {
	local fam
	for fam in ip ip6; do
		if nft list table "$fam" kube-proxy >/dev/null 2>&1; then
			nft delete table "$fam" kube-proxy
			nv_log "deleted nftables table $fam kube-proxy"
		fi
	done
}

# nv_kubelet_iptables_cleanup: the chains the kubelets make in the host's iptables (their
# KUBE-KUBELET-CANARY chains and KUBE-FIREWALL, which drops packets to 127.0.0.0/8 from other
# addresses), gone once no kubelet runs.
nv_kubelet_iptables_cleanup() {
	local ipt table chain
	for ipt in iptables ip6tables; do
		command -v "$ipt" >/dev/null || continue
		for chain in INPUT OUTPUT; do
			while "$ipt" -w -t filter -D "$chain" -j KUBE-FIREWALL 2>/dev/null; do :; done
		done
		"$ipt" -w -t filter -F KUBE-FIREWALL 2>/dev/null && "$ipt" -w -t filter -X KUBE-FIREWALL 2>/dev/null
		for table in mangle filter nat; do
			"$ipt" -w -t "$table" -X KUBE-KUBELET-CANARY 2>/dev/null
			"$ipt" -w -t "$table" -X KUBE-IPTABLES-HINT 2>/dev/null
		done
	done
	return 0
}

# nv_local_path_config: local-path-provisioner's ConfigMap: a directory of its own per node (every
# node this cluster may have, so that it can grow), and the helper pod that makes and removes a
# volume's directory there (busybox).
nv_local_path_config() {
	local i n paths=""
	for ((i = 1; i <= NV_MAX_NODES; i++)); do
		n=$(nv_node_name "$i")
		paths+="${paths:+,}{\"node\":\"$n\",\"paths\":[\"$NV_NODES_DIR/$n/$NV_LOCAL_PATH_DIR\"]}"
	done
	local dir
	dir=$(mktemp -d)
	cat >"$dir/config.json" <<EOF
{"nodePathMap":[$paths]}
EOF
	cat >"$dir/setup" <<'EOF'
#!/bin/sh
set -eu
mkdir -m 0777 -p "$VOL_DIR"
EOF
	cat >"$dir/teardown" <<'EOF'
#!/bin/sh
set -eu
rm -rf "$VOL_DIR"
EOF
	cat >"$dir/helperPod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: helper-pod
spec:
  priorityClassName: system-node-critical
  tolerations:
  - key: node.kubernetes.io/disk-pressure
    operator: Exists
    effect: NoSchedule
  containers:
  - name: helper-pod
    image: localhost/busybox:dev
    imagePullPolicy: Never
EOF
	nv_kubectl create configmap local-path-config -n local-path-storage \
		--from-file="$dir/config.json" --from-file="$dir/setup" --from-file="$dir/teardown" \
		--from-file="$dir/helperPod.yaml" --dry-run=client -o yaml
	rm -rf "$dir"
}

# nv_addons_images: the addons' images, built (cached) and imported into every node.
nv_addons_images() {
	"$NV_ROOT/hack/images/build-coredns.sh" | sed 's/^/  /'
	"$NV_ROOT/hack/images/build-local-path-provisioner.sh" | sed 's/^/  /'
	"$NV_ROOT/hack/images/build-busybox.sh" | sed 's/^/  /'
}

# nv_addons_up: CoreDNS and local-path-provisioner (artifacts/cluster), applied and rolled out.
nv_addons_up() {
	nv_addons_images
	local n
	for n in $(nv_node_names); do
		mkdir -p "$NV_NODES_DIR/$n/$NV_LOCAL_PATH_DIR"
	done
	nv_kubectl apply -f "$NV_ADDONS_DIR/coredns.yaml" -f "$NV_ADDONS_DIR/local-path-storage.yaml" | sed 's/^/  apply: /'
	nv_local_path_config | nv_kubectl apply -f - | sed 's/^/  apply: /'
	nv_kubectl -n kube-system rollout status deployment/coredns --timeout=180s
	nv_kubectl -n local-path-storage rollout status deployment/local-path-provisioner --timeout=180s
}

# nv_addons_ready: CoreDNS and the provisioner have available pods.
nv_addons_ready() {
	local out
	out=$(nv_kubectl get deployment -A -l nativevirt.io/cluster-addon \
		-o 'jsonpath={range .items[*]}{.status.availableReplicas}{" "}{end}' --request-timeout=5s 2>/dev/null) || return 1
	[[ $(wc -w <<<"$out") -eq 2 && $out != *" 0"* ]]
}

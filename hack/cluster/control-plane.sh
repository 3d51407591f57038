#!/usr/bin/env bash
# The control plane of the local cluster: etcd, kube-apiserver, kube-controller-manager and
# kube-scheduler, and the bridge everything sits on. Sourced after lib.sh and pki.sh, never run.

# shellcheck disable=SC2154 # the nv_n_* variables are set by nv_node (lib.sh).

# nv_cluster_up: true when every process runs, kube-apiserver is ready and so are the addons
# (CoreDNS, the storage provisioner: hack/cluster/addons.sh, sourced too).
nv_cluster_up() {
	local p
	for p in $(nv_procs); do
		nv_running "$p" || return 1
	done
	[[ -x $NV_BIN/kubectl && -f $NV_KUBECONFIG ]] || return 1
	nv_kubectl get --raw /readyz --request-timeout=5s >/dev/null 2>&1 || return 1
	nv_addons_ready
}

# nv_network_up: bridge nv0 with the gateway address of the pod network, then one /32 address
# per node (nv_node) for its kubelet and node agent. It exists before kube-apiserver binds to its
# address; the CNI bridge plugin adopts it. The gateway address must stay the bridge's first
# IPv4 address: the bridge plugin accepts the bridge when the first one it meets is its gateway.
nv_network_up() {
	local other i
	other=$(ip -4 route show "$NV_POD_CIDR" 2>/dev/null | grep -v "dev $NV_BRIDGE " || true)
	[[ -z $other ]] || nv_die "$NV_POD_CIDR is already routed elsewhere: $other"
	if ! ip link show "$NV_BRIDGE" >/dev/null 2>&1; then
		ip link add "$NV_BRIDGE" type bridge
	fi
	# A fixed MAC: a bridge without one takes the lowest MAC of its ports, so it changed whenever
	# a pod's veth came or went, and pods' cached neighbour entries for the nodes' addresses
	# pointed at a MAC nobody answered for seconds (kube-apiserver's dials to the node agents
	# timed out after pod churn, e.g. migrations).
	ip link set "$NV_BRIDGE" address "$NV_BRIDGE_MAC"
	if ! ip -4 addr show dev "$NV_BRIDGE" | grep -q "inet $NV_BRIDGE_IP/"; then
		ip addr add "$NV_BRIDGE_IP/${NV_POD_CIDR#*/}" dev "$NV_BRIDGE"
	fi
	for ((i = 1; i <= NV_NODES; i++)); do
		nv_node "$i"
		if ! ip -4 addr show dev "$NV_BRIDGE" | grep -q "inet $nv_n_ip/"; then
			ip addr add "$nv_n_ip/32" dev "$NV_BRIDGE"
		fi
	done
	local first
	first=$(ip -4 -o addr show dev "$NV_BRIDGE" | awk '{print $4; exit}')
	[[ $first == "$NV_BRIDGE_IP/${NV_POD_CIDR#*/}" ]] ||
		nv_die "$NV_BRIDGE's first address is $first, not the gateway $NV_BRIDGE_IP (hack/cluster/down.sh deletes the bridge)"
	ip link set "$NV_BRIDGE" up
}

# nv_etcd_up: Debian's etcd on 127.0.0.1 with its data in $NV_LOCAL_DIR/etcd.
nv_etcd_up() {
	local client=http://127.0.0.1:$NV_ETCD_CLIENT_PORT peer=http://127.0.0.1:$NV_ETCD_PEER_PORT
	mkdir -p "$NV_LOCAL_DIR/etcd"
	chmod 700 "$NV_LOCAL_DIR/etcd"
	nv_start etcd etcd --name nativevirt-local --data-dir "$NV_LOCAL_DIR/etcd" \
		--listen-client-urls "$client" --advertise-client-urls "$client" \
		--listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
		--initial-cluster "nativevirt-local=$peer" \
		--listen-metrics-urls "http://127.0.0.1:$NV_ETCD_METRICS_PORT" \
		--logger zap --log-outputs stderr
	nv_wait_for 60 "etcd health" curl -sf "$client/health"
}

# nv_apiserver_up: kube-apiserver on the bridge address, with aggregation (front proxy) and
# token authentication for humans, components and test users. It keeps the endpoints of the
# kubernetes Service (lease reconciler): in-cluster clients reach it at 10.96.0.1:443 through
# kube-proxy, as in any cluster. NV_KUBE_APISERVER_ARGS adds flags (split on blanks), e.g. an
# audit log to see who writes what: --audit-policy-file=... --audit-log-path=...
nv_apiserver_up() {
	local extra=()
	read -ra extra <<<"${NV_KUBE_APISERVER_ARGS:-}"
	nv_start kube-apiserver "$NV_BIN/kube-apiserver" \
		--etcd-servers="http://127.0.0.1:$NV_ETCD_CLIENT_PORT" \
		--bind-address="$NV_BRIDGE_IP" --advertise-address="$NV_BRIDGE_IP" --secure-port="$NV_API_PORT" \
		--tls-cert-file="$NV_PKI/apiserver.crt" --tls-private-key-file="$NV_PKI/apiserver.key" \
		--client-ca-file="$NV_PKI/ca.crt" \
		--token-auth-file="$NV_PKI/tokens.csv" \
		--authorization-mode=Node,RBAC \
		--enable-admission-plugins=NodeRestriction \
		--allow-privileged=true \
		--service-cluster-ip-range="$NV_SERVICE_CIDR" \
		--endpoint-reconciler-type=lease \
		--service-account-key-file="$NV_PKI/sa.pub" \
		--service-account-signing-key-file="$NV_PKI/sa.key" \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--kubelet-client-certificate="$NV_PKI/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$NV_PKI/apiserver-kubelet-client.key" \
		--kubelet-preferred-address-types=InternalIP,Hostname \
		--enable-aggregator-routing=true \
		--proxy-client-cert-file="$NV_PKI/front-proxy-client.crt" \
		--proxy-client-key-file="$NV_PKI/front-proxy-client.key" \
		--requestheader-client-ca-file="$NV_PKI/front-proxy-ca.crt" \
		--requestheader-allowed-names=front-proxy-client \
		--requestheader-extra-headers-prefix=X-Remote-Extra- \
		--requestheader-group-headers=X-Remote-Group \
		--requestheader-username-headers=X-Remote-User \
		--requestheader-uid-headers=X-Remote-Uid \
		--v=1 "${extra[@]}"
	nv_wait_for 120 "kube-apiserver /readyz" nv_kubectl get --raw /readyz --request-timeout=5s
}

# nv_controllers_up: kube-controller-manager (removes the node's not-ready taint, creates
# ServiceAccounts, the kube-root-ca.crt ConfigMaps, garbage-collects owned objects) and
# kube-scheduler, each with its own identity and delegated authn/authz.
nv_controllers_up() {
	local kcm=$NV_KUBECONFIGS/kube-controller-manager.kubeconfig
	local sched=$NV_KUBECONFIGS/kube-scheduler.kubeconfig
	nv_start kube-controller-manager "$NV_BIN/kube-controller-manager" \
		--kubeconfig="$kcm" --authentication-kubeconfig="$kcm" --authorization-kubeconfig="$kcm" \
		--bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
		--controllers='*' --use-service-account-credentials=true \
		--service-account-private-key-file="$NV_PKI/sa.key" --root-ca-file="$NV_PKI/ca.crt" \
		--cluster-signing-cert-file="$NV_PKI/ca.crt" --cluster-signing-key-file="$NV_PKI/ca.key" \
		--service-cluster-ip-range="$NV_SERVICE_CIDR" --allocate-node-cidrs=false \
		--v=1
	nv_start kube-scheduler "$NV_BIN/kube-scheduler" \
		--kubeconfig="$sched" --authentication-kubeconfig="$sched" --authorization-kubeconfig="$sched" \
		--bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false \
		--v=1
}

# nv_forget_stale_nodes: delete the Node objects that no kubelet of this cluster serves any more
# (a node of an earlier, larger cluster whose state is kept): a node agent DaemonSet would wait
# for a pod on them forever, and their pods are garbage-collected with them.
nv_forget_stale_nodes() {
	local want n
	want=" $(nv_node_names | tr '\n' ' ')"
	for n in $(nv_kubectl get nodes -o 'jsonpath={.items[*].metadata.name}'); do
		[[ $want == *" $n "* ]] && continue
		nv_running "kubelet-$n" && continue
		nv_log "deleting node $n (not part of this ${NV_NODES}-node cluster)"
		nv_kubectl delete node "$n" --wait=false
	done
}

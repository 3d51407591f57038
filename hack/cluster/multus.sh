#!/usr/bin/env bash
# Multus on the local cluster: secondary networks for pods (NetworkAttachmentDefinitions), as
# KubeVirt's Multus networks need. Sourced after lib.sh by up.sh and down.sh, never run.
#
# The thin Multus plugin (hack/tools/multus, Multus v4.2.2) is every node's CNI configuration
# (00-multus.conf, first in the node's CNI directory, so containerd picks it): it delegates the
# pod network to the node's bridge network (10-nativevirt.conflist, embedded as its delegate) and
# adds the networks that the pod's k8s.v1.cni.cncf.io/networks annotation names, as
# system:multus (artifacts/cluster/multus.yaml). Multus and the reference CNI plugins (Debian's
# containernetworking-plugins, /usr/lib/cni) are copied to $NV_CNI_BIN, the nodes' CNI bin
# directory; Multus's cache lives in each node's runtime directory. All of it is under
# $NV_RUN_DIR, which down.sh removes. A NetworkAttachmentDefinition whose plugin makes links on the
# host (a `bridge` plugin's bridge: the nodes share the host's network namespace) names its
# bridge with the prefix $NV_NAD_BRIDGE_PREFIX, and its host-local IPAM keeps its state under
# $NV_RUN_DIR: down.sh deletes those bridges.

# shellcheck disable=SC2154 # the nv_n_* variables are set by nv_node (lib.sh).

NV_CNI_BIN=$NV_RUN_DIR/cni-bin
NV_MULTUS_BIN=$NV_BIN/multus
NV_MULTUS_MODULE=$NV_ROOT/hack/tools/multus
NV_NAD_BRIDGE_PREFIX=nvnet-

# nv_multus_build: the thin Multus plugin in $NV_BIN, rebuilt when its module changed.
nv_multus_build() {
	if [[ -x $NV_MULTUS_BIN && $NV_MULTUS_BIN -nt $NV_MULTUS_MODULE/go.sum && $NV_MULTUS_BIN -nt $NV_MULTUS_MODULE/go.mod ]]; then
		nv_log "multus present"
		return 0
	fi
	mkdir -p "$NV_BIN"
	(cd "$NV_MULTUS_MODULE" && GOWORK=off CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags '-s -w' \
		-o "$NV_MULTUS_BIN" gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus)
	nv_log "built $NV_MULTUS_BIN"
}

# nv_multus_up: Multus and the reference plugins in $NV_CNI_BIN, the CRD and RBAC applied.
nv_multus_up() {
	nv_multus_build
	mkdir -p "$NV_CNI_BIN"
	cp -a /usr/lib/cni/. "$NV_CNI_BIN/"
	cp "$NV_MULTUS_BIN" "$NV_CNI_BIN/multus"
	nv_kubectl apply -f "$NV_ROOT/artifacts/cluster/multus.yaml" | sed 's/^/  apply: /'
	nv_wait_for 60 "NetworkAttachmentDefinition CRD" \
		nv_kubectl wait --for=condition=Established --timeout=5s crd/network-attachment-definitions.k8s.cni.cncf.io
}

# nv_multus_config: the node's 00-multus.conf, delegating the pod network to the node's bridge
# network (nv_cni_config, written before).
nv_multus_config() {
	local delegate
	delegate=$(cat "$nv_n_dir/cni/10-$NV_CNI_NETWORK.conflist")
	mkdir -p "$nv_n_run/multus" "$NV_LOGS"
	cat >"$nv_n_dir/cni/00-multus.conf" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "multus-cni-network",
  "type": "multus",
  "kubeconfig": "$NV_KUBECONFIGS/multus.kubeconfig",
  "binDir": "$NV_CNI_BIN",
  "cniDir": "$nv_n_run/multus",
  "confDir": "$nv_n_dir/cni/multus.d",
  "logFile": "$NV_LOGS/multus-$nv_n_name.log",
  "logLevel": "verbose",
  "delegates": [$delegate]
}
EOF
}

# nv_multus_bridges_down: the host bridges of NetworkAttachmentDefinitions (prefix
# $NV_NAD_BRIDGE_PREFIX), once no pod uses them.
nv_multus_bridges_down() {
	local br
	for br in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
		[[ $br == "$NV_NAD_BRIDGE_PREFIX"* ]] || continue
		ip link delete "$br" 2>/dev/null && nv_log "deleted bridge $br"
	done
	return 0
}

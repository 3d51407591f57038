#!/usr/bin/env bash
# Deploys NativeVirt into the running local cluster (hack/cluster/up.sh) from artifacts/local:
# builds the binaries and the images (localhost/nativevirt:dev, the launcher, the node agent and
# the demo containerDisk), issues the serving certificate of nativevirt-apiserver.nativevirt.svc
# and the node agents' PKI (node CA, the handler's serving cert for the nodes' addresses, the
# apiserver's client cert), applies the manifests with the APIServices' caBundle set, and waits
# until the six APIServices are Available, the controller and the node agents run and every
# node is schedulable for VMs. Idempotent: a second run with nothing changed changes nothing (pods
# restart only when their image changed).
#
#   hack/deploy-local.sh
#   NV_HA=1 hack/deploy-local.sh    # the HA installation (artifacts/local/ha)
#
# NV_HA=1 deploys the production overlay instead (artifacts/deploy/overlays/production through
# artifacts/local/ha): a three-member etcd StatefulSet with TLS on claims of the default
# StorageClass, whose certificates artifacts/deploy/overlays/production/etcd-certs.sh makes (in
# $NV_LOCAL_DIR/certs/etcd), two API servers on it and the PodDisruptionBudgets; it also waits
# for the three etcd members. The embedded etcd's data ($NV_LOCAL_DIR/nativevirt-apiserver) is
# not carried over: each installation keeps its objects in its own etcd.
# Environment: NV_LOCAL_DIR, NV_BIN_DIR (as for hack/cluster/up.sh); NV_SKIP_BUILD=1 reuses the
# binaries in $NV_BIN_DIR as they are; NV_SKIP_IMAGES=1 uses the image tarballs in _output/images as
# they are, already imported (make images did both); NV_DEPLOY_TIMEOUT (seconds, default 180) bounds each wait.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cluster/lib.sh"

NS=nativevirt
APISERVICES=(v1.kubevirt.io v1alpha3.kubevirt.io v1.subresources.kubevirt.io v1beta1.instancetype.kubevirt.io
	v1beta1.cdi.kubevirt.io v1beta1.upload.cdi.kubevirt.io)
TIMEOUT=${NV_DEPLOY_TIMEOUT:-180}
HA=${NV_HA:-0}
[[ $HA == 0 || $HA == 1 ]] || nv_die "NV_HA=$HA: want 0 or 1"
OVERLAY=$NV_LOCAL_DIR/deploy
CERTS=$NV_LOCAL_DIR/certs/nativevirt-apiserver
# The HA installation's etcd PKI (etcd-certs.sh).
ETCD_CERTS=$NV_LOCAL_DIR/certs/etcd
# ... and the key both of its API servers sign upload tokens with.
UPLOAD_KEY=$NV_LOCAL_DIR/certs/upload-token-key
# The node agents' PKI: node CA in $NV_PKI/node-ca.*, leaf certs here.
NODE_CERTS=$NV_LOCAL_DIR/certs/node-agent
# The nodes' directories (hack/cluster/lib.sh): node N's kubelet --root-dir, where launcher pod
# volumes and the device plugin sockets live, is $NODES_DIR/N/kubelet.
NODES_DIR=$NV_NODES_DIR
# The embedded etcd's data; the pod runs as the image's nonroot user.
DATA=$NV_LOCAL_DIR/nativevirt-apiserver
POD_UID=65532

nv_step "check the cluster"
nv_kubectl get --raw /readyz --request-timeout=5s >/dev/null 2>&1 ||
	nv_die "the local cluster is not up (kube-apiserver at $NV_API_URL); run hack/cluster/up.sh"

if [[ ${NV_SKIP_BUILD:-0} != 1 ]]; then
	nv_step "build binaries (make build)"
	make -C "$NV_ROOT" --no-print-directory build BIN="$NV_BIN"
fi

if [[ ${NV_SKIP_IMAGES:-0} != 1 ]]; then
	nv_step "build and import the images"
	"$NV_ROOT/hack/images/build-nativevirt.sh"
	# The launcher (libvirt + QEMU), the node agent on the launcher's rootfs and the demo guest's
	# containerDisk: each script caches its work and imports its tarball into containerd.
	"$NV_ROOT/hack/images/build-launcher.sh"
	"$NV_ROOT/hack/images/build-handler.sh"
	"$NV_ROOT/hack/images/build-demo-disk.sh"
fi
images=(nativevirt nativevirt-handler nativevirt-launcher demo-disk)
if [[ $HA == 1 ]]; then
	# etcd's server, built from the Go module proxy (hack/tools/etcd); cached like the others.
	nv_step "build and import the etcd image"
	"$NV_ROOT/hack/images/build-etcd.sh"
	images+=(etcd)
fi
for tar in "${images[@]}"; do
	[[ -f $NV_ROOT/_output/images/$tar.tar ]] || nv_die "_output/images/$tar.tar is missing (make images)"
done
# mkimage.sh is reproducible: the tarball's digest changes exactly when the image does.
image_digest=$(sha256sum "$NV_ROOT/_output/images/nativevirt.tar" | cut -c1-64)
handler_digest=$(sha256sum "$NV_ROOT/_output/images/nativevirt-handler.tar" | cut -c1-64)
# The agent's pod probes QEMU in the launcher image: a new launcher image needs a new probe.
launcher_digest=$(sha256sum "$NV_ROOT/_output/images/nativevirt-launcher.tar" | cut -c1-64)

nv_step "serving certificate"
ca_bundle=$("$NV_ROOT/hack/cluster/serving-cert.sh" "$CERTS" \
	nativevirt-apiserver.$NS.svc nativevirt-apiserver.$NS.svc.cluster.local)
[[ -n $ca_bundle ]] || nv_die "serving-cert.sh printed no CA bundle"

# The cluster's nodes and their InternalIP addresses (hack/cluster/lib.sh: 10.88.0.2, ...).
mapfile -t NODES < <(nv_kubectl get nodes -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}')
[[ ${#NODES[@]} -gt 0 ]] || nv_die "the cluster has no nodes"
node_sans=()
for n in "${NODES[@]}"; do
	ip=$(nv_kubectl get node "$n" -o 'jsonpath={.status.addresses[?(@.type=="InternalIP")].address}')
	node_sans+=("DNS:$n" ${ip:+"IP:$ip"})
done

nv_step "node agent PKI"
# The apiserver dials the node agents at the address they advertise (their node's address here)
# and presents a client certificate with CN nativevirt-apiserver; both sides trust only the node
# CA. One certificate for all the local nodes' agents (CN nativevirt-handler); it also
# authenticates one agent to another for live migration tunnels, hence its clientAuth usage.
(
	source "$NV_ROOT/hack/cluster/pki.sh"
	mkdir -p "$NV_PKI" "$NODE_CERTS"
	nv_pki_ca node-ca "nativevirt node CA"
	nv_pki_issue node-ca "$NODE_CERTS/handler.crt" "$NODE_CERTS/handler.key" \
		/CN=nativevirt-handler server+client "IP:$NV_BRIDGE_IP" "IP:127.0.0.1" "${node_sans[@]}"
	nv_pki_issue node-ca "$NODE_CERTS/apiserver-client.crt" "$NODE_CERTS/apiserver-client.key" \
		/CN=nativevirt-apiserver client
	cp "$NV_PKI/node-ca.crt" "$NODE_CERTS/ca.crt"
)

if [[ $HA == 1 ]]; then
	# As the production overlay says: etcd-certs.sh makes the CA, the members' peer and serving
	# certificates and the API servers' client certificate (an existing CA is reused). Only when
	# one is missing or expires within 30 days: new certificates roll the members and API servers.
	nv_step "etcd certificates (etcd-certs.sh)"
	etcd_certs_current() {
		local f
		for f in ca peer server client; do
			[[ -s $ETCD_CERTS/$f.crt && -s $ETCD_CERTS/$f.key ]] || return 1
			openssl x509 -noout -checkend $((30 * 86400)) -in "$ETCD_CERTS/$f.crt" >/dev/null || return 1
		done
	}
	if etcd_certs_current; then
		nv_log "the certificates in $ETCD_CERTS are current"
	else
		"$NV_ROOT/artifacts/deploy/overlays/production/etcd-certs.sh" "$ETCD_CERTS" | sed 's/^/etcd-certs: /'
	fi
fi

nv_step "generate the overlay ($OVERLAY)"
install -d -m 0700 "$OVERLAY"
if [[ $HA == 0 ]]; then
	install -d -o "$POD_UID" -g "$POD_UID" -m 0700 "$DATA"
	# install -d leaves an existing directory's owner alone: a data dir made by someone else
	# would fail later inside the pod with a less helpful message.
	[[ $(stat -c %u "$DATA") == "$POD_UID" ]] || chown -R "$POD_UID:$POD_UID" "$DATA"
fi
umask 077
rm -f "$OVERLAY"/etcd-*-secret.yaml "$OVERLAY/upload-token-key-secret.yaml"
nv_kubectl create secret tls nativevirt-apiserver-serving-cert --namespace "$NS" \
	--cert "$CERTS/tls.crt" --key "$CERTS/tls.key" --dry-run=client -o yaml >"$OVERLAY/serving-cert-secret.yaml"
nv_kubectl create secret generic nativevirt-handler-certs --namespace "$NS" \
	--from-file=ca.crt="$NODE_CERTS/ca.crt" --from-file=tls.crt="$NODE_CERTS/handler.crt" \
	--from-file=tls.key="$NODE_CERTS/handler.key" --dry-run=client -o yaml >"$OVERLAY/handler-certs-secret.yaml"
nv_kubectl create secret generic nativevirt-apiserver-node-agent-certs --namespace "$NS" \
	--from-file=ca.crt="$NODE_CERTS/ca.crt" --from-file=tls.crt="$NODE_CERTS/apiserver-client.crt" \
	--from-file=tls.key="$NODE_CERTS/apiserver-client.key" --dry-run=client -o yaml \
	>"$OVERLAY/apiserver-node-agent-certs-secret.yaml"
# A change of the node PKI must reach running pods (Secret volumes update, but the processes
# read their certificates once).
pki_digest=$(cat "$NODE_CERTS"/*.crt | sha256sum | cut -c1-16)
source_dir=$NV_ROOT/artifacts/local
# The apiserver's etcd: the embedded one's hostPath here, or the external one's client certificate.
data_volume="
        spec:
          volumes:
          - name: data
            emptyDir: null
            hostPath:
              path: $DATA
              type: Directory"
if [[ $HA == 1 ]]; then
	source_dir=$NV_ROOT/artifacts/local/ha
	data_volume=""
	# The Secrets etcd-certs.sh names, made as it prints them.
	etcd_secret() {
		nv_kubectl create secret generic "$1" --namespace "$NS" --from-file=tls.crt="$ETCD_CERTS/$2.crt" \
			--from-file=tls.key="$ETCD_CERTS/$2.key" --from-file=ca.crt="$ETCD_CERTS/ca.crt" \
			--dry-run=client -o yaml >"$OVERLAY/etcd-$2-secret.yaml"
	}
	etcd_secret nativevirt-etcd-peer peer
	etcd_secret nativevirt-etcd-server server
	etcd_secret nativevirt-apiserver-etcd-client client
	# The upload token key both API servers sign with (artifacts/README.md), made once.
	if [[ ! -s $UPLOAD_KEY ]]; then
		openssl rand -base64 48 | tr -d '\n' >"$UPLOAD_KEY"
	fi
	nv_kubectl create secret generic nativevirt-upload-token-key --namespace "$NS" \
		--from-file=key="$UPLOAD_KEY" --dry-run=client -o yaml >"$OVERLAY/upload-token-key-secret.yaml"
	pki_digest=$(cat "$NODE_CERTS"/*.crt "$ETCD_CERTS"/*.crt | sha256sum | cut -c1-16)
	etcd_digest=$(sha256sum "$NV_ROOT/_output/images/etcd.tar" | cut -c1-64)
	etcd_pki_digest=$(cat "$ETCD_CERTS"/*.crt | sha256sum | cut -c1-16)
	# The members roll when their image or certificates change.
	etcd_patch="
- target:
    kind: StatefulSet
    name: nativevirt-etcd
  patch: |-
    apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: nativevirt-etcd
    spec:
      template:
        metadata:
          annotations:
            nativevirt.io/image-digest: sha256:$etcd_digest
            nativevirt.io/etcd-pki: \"$etcd_pki_digest\""
fi
cat >"$OVERLAY/kustomization.yaml" <<EOF
# Generated by hack/deploy-local.sh; do not edit.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(realpath --relative-to="$OVERLAY" "$source_dir")
- serving-cert-secret.yaml
- handler-certs-secret.yaml
- apiserver-node-agent-certs-secret.yaml
$(if [[ $HA == 1 ]]; then printf -- '- %s\n' etcd-peer-secret.yaml etcd-server-secret.yaml etcd-client-secret.yaml upload-token-key-secret.yaml; fi)
patches:
- target:
    kind: APIService
  patch: |-
    - op: add
      path: /spec/caBundle
      value: $ca_bundle
- target:
    kind: Deployment
    name: nativevirt-apiserver
  patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: nativevirt-apiserver
    spec:
      template:
        metadata:
          annotations:
            nativevirt.io/image-digest: sha256:$image_digest
            nativevirt.io/node-pki: "$pki_digest"$data_volume
- target:
    kind: Deployment
    name: nativevirt-controller
  patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: nativevirt-controller
    spec:
      template:
        metadata:
          annotations:
            nativevirt.io/image-digest: sha256:$image_digest
- target:
    kind: DaemonSet
    name: nativevirt-handler
  patch: |-
    - op: add
      path: /spec/template/metadata/annotations
      value:
        nativevirt.io/image-digest: sha256:$handler_digest
        nativevirt.io/launcher-image-digest: sha256:$launcher_digest
        nativevirt.io/node-pki: "$pki_digest"
    # Every node's paths are its own, below the nodes' directory (a shared mount: pod volumes
    # mounted by a node's kubelet propagate into the agent): its kubelet's root, with the device
    # plugin directory inside, and the agent's checkpoints.
    - op: test
      path: /spec/template/spec/containers/0/args/0
      value: --kubelet-root=/var/lib/kubelet
    - op: replace
      path: /spec/template/spec/containers/0/args/0
      value: --kubelet-root=$NODES_DIR/\$(NODE_NAME)/kubelet
    - op: test
      path: /spec/template/spec/containers/0/volumeMounts/0/name
      value: kubelet
    - op: replace
      path: /spec/template/spec/containers/0/volumeMounts/0/mountPath
      value: $NODES_DIR
    - op: test
      path: /spec/template/spec/volumes/0/name
      value: kubelet
    - op: replace
      path: /spec/template/spec/volumes/0/hostPath/path
      value: $NODES_DIR
    - op: test
      path: /spec/template/spec/containers/0/volumeMounts/1/name
      value: state
    - op: add
      path: /spec/template/spec/containers/0/volumeMounts/1/subPathExpr
      value: \$(NODE_NAME)/handler
    # The QEMU probe writes into the same per-node state directory.
    - op: test
      path: /spec/template/spec/initContainers/0/volumeMounts/0/name
      value: state
    - op: add
      path: /spec/template/spec/initContainers/0/volumeMounts/0/subPathExpr
      value: \$(NODE_NAME)/handler
    - op: add
      path: /spec/template/spec/initContainers/0/env
      value:
      - name: NODE_NAME
        valueFrom:
          fieldRef:
            fieldPath: spec.nodeName
    - op: test
      path: /spec/template/spec/volumes/1/name
      value: state
    - op: replace
      path: /spec/template/spec/volumes/1/hostPath
      value:
        path: $NODES_DIR
        type: Directory${etcd_patch:-}
EOF
umask 022

# The installation in place, if any: the HA one's API servers name their etcd servers, the default
# one's embeds its etcd. Switching from one to the other works, but each keeps its objects in its
# own etcd: what the other one held is not carried over. Clients that were running (controllers,
# node agents, users' informers) relist against the new etcd: the API server refuses their old
# etcd's resourceVersions (pkg/apiserver/storage/revisionguard.go).
installed=$(nv_kubectl -n "$NS" get deployment nativevirt-apiserver --ignore-not-found \
	-o jsonpath='{.spec.template.spec.containers[0].args}')
if [[ -n $installed ]]; then
	installed_ha=0
	[[ $installed == *--etcd-servers=* ]] && installed_ha=1
	if [[ $installed_ha != "$HA" ]]; then
		names=(default HA)
		vms=$(nv_kubectl get virtualmachines,virtualmachineinstances -A --no-headers --request-timeout=10s 2>/dev/null | wc -l || true)
		nv_log "switching from the ${names[$installed_ha]} installation to the ${names[$HA]} one: the ${vms:-?} VMs and instances in the ${names[$installed_ha]} installation's etcd are not carried over"
	fi
fi

nv_step "apply"
nv_kubectl kustomize "$OVERLAY" | nv_kubectl apply -f - | sed 's/^/apply: /'
if [[ $HA == 0 && ${installed_ha:-0} == 1 ]]; then
	# What only the HA installation has: its etcd (the members' claims stay, with the HA
	# installation's objects) and its PodDisruptionBudgets.
	nv_step "remove the HA installation's etcd"
	nv_kubectl -n "$NS" delete --ignore-not-found statefulset/nativevirt-etcd service/nativevirt-etcd \
		serviceaccount/nativevirt-etcd poddisruptionbudget/nativevirt-etcd poddisruptionbudget/nativevirt-apiserver \
		secret/nativevirt-etcd-peer secret/nativevirt-etcd-server secret/nativevirt-apiserver-etcd-client |
		sed 's/^/delete: /'
fi

if [[ $HA == 1 ]]; then
	# The members start together (podManagementPolicy Parallel) once their claims are bound
	# (WaitForFirstConsumer: when the scheduler picked their nodes); the API servers wait for them.
	nv_step "wait for the etcd members"
	if ! nv_kubectl -n "$NS" rollout status statefulset/nativevirt-etcd --timeout="${TIMEOUT}s"; then
		nv_kubectl -n "$NS" get pods,pvc -o wide >&2 || true
		nv_kubectl -n "$NS" logs statefulset/nativevirt-etcd --tail=40 >&2 || true
		nv_die "the etcd members did not become ready"
	fi
fi

nv_step "wait for the rollout"
# A pod waiting out a crash-loop back-off keeps the rollout waiting for minutes even after the
# cause outside the pod was fixed (RBAC, a Secret): restart such pods at once.
for pod in $(nv_kubectl -n "$NS" get pods -l app.kubernetes.io/name=nativevirt-apiserver \
	-o jsonpath='{range .items[*]}{.metadata.name} {.status.containerStatuses[*].state.waiting.reason}{"\n"}{end}' |
	awk '$2 == "CrashLoopBackOff" {print $1}'); do
	nv_log "restarting $pod (CrashLoopBackOff)"
	nv_kubectl -n "$NS" delete pod "$pod" --wait=false
done
if ! nv_kubectl -n "$NS" rollout status deployment/nativevirt-apiserver --timeout="${TIMEOUT}s"; then
	nv_kubectl -n "$NS" get pods -o wide >&2 || true
	nv_kubectl -n "$NS" logs deployment/nativevirt-apiserver --tail=40 >&2 || true
	nv_die "nativevirt-apiserver did not roll out"
fi

nv_step "wait for the controller and the node agent"
if ! nv_kubectl -n "$NS" rollout status deployment/nativevirt-controller --timeout="${TIMEOUT}s"; then
	nv_kubectl -n "$NS" get pods -o wide >&2 || true
	nv_kubectl -n "$NS" logs deployment/nativevirt-controller --tail=40 >&2 || true
	nv_die "nativevirt-controller did not roll out"
fi
if ! nv_kubectl -n "$NS" rollout status daemonset/nativevirt-handler --timeout="${TIMEOUT}s"; then
	nv_kubectl -n "$NS" get pods -o wide >&2 || true
	nv_kubectl -n "$NS" describe pods -l app.kubernetes.io/name=nativevirt-handler >&2 || true
	nv_kubectl -n "$NS" logs daemonset/nativevirt-handler --tail=40 >&2 || true
	nv_die "nativevirt-handler did not roll out"
fi
# A node agent labels its node once its informers, device plugins and stream server run.
node_schedulable() {
	[[ $(nv_kubectl get node "$1" -o jsonpath='{.metadata.labels.kubevirt\.io/schedulable}') == true ]]
}
for n in "${NODES[@]}"; do
	if ! nv_wait_for "$TIMEOUT" "node $n labelled kubevirt.io/schedulable=true" node_schedulable "$n"; then
		nv_kubectl -n "$NS" get pods -o wide >&2 || true
		nv_kubectl -n "$NS" logs daemonset/nativevirt-handler --tail=40 >&2 || true
		nv_die "the node agent did not make $n schedulable"
	fi
done

nv_step "wait for the APIServices"
for svc in "${APISERVICES[@]}"; do
	if ! nv_kubectl wait --for=condition=Available "apiservice/$svc" --timeout="${TIMEOUT}s" >/dev/null; then
		nv_kubectl get apiservice "$svc" -o jsonpath='{.status.conditions}' >&2 || true
		echo >&2
		nv_die "APIService $svc is not Available"
	fi
	nv_log "$svc Available"
done

# kube-controller-manager folds the kubevirt.io:* roles into view/edit/admin shortly after they
# appear; tests and users binding those roles should not race it.
nv_step "wait for the aggregated view/edit/admin roles"
role_aggregated() {
	nv_kubectl get clusterrole "$1" -o jsonpath='{.rules[*].apiGroups}' | grep -q '"kubevirt.io"'
}
for role in view edit admin; do
	nv_wait_for "$TIMEOUT" "kubevirt.io rules in ClusterRole $role" role_aggregated "$role"
done

# kube-apiserver re-reads an aggregated server's OpenAPI v3 index about once a minute. Until it
# has read the new pod's, it hands out the old schema hash, which the new pod answers with a
# redirect that kube-apiserver's proxy refuses: `kubectl explain` and server-side apply's schema
# lookups fail meanwhile.
nv_step "wait for kube-apiserver's OpenAPI index of kubevirt.io and instancetype.kubevirt.io"
openapi_current() {
	local url
	url=$(nv_kubectl get --raw /openapi/v3 | grep -o "\"apis/$1\":{\"serverRelativeURL\":\"[^\"]*\"" | cut -d'"' -f6)
	[[ -n $url ]] && nv_kubectl get --raw "$url" >/dev/null
}
for gv in kubevirt.io/v1 instancetype.kubevirt.io/v1beta1; do
	nv_wait_for "$TIMEOUT" "a current OpenAPI v3 index of $gv in kube-apiserver" openapi_current "$gv"
done

nv_step_report
echo "NativeVirt deployed: kubectl --kubeconfig $NV_KUBECONFIG get vms -A"

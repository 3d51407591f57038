#!/usr/bin/env bash
# make run: the main job. On a fresh Debian 12 machine (root) it installs what is missing, builds
# NativeVirt and Kubernetes, builds the images, starts a local Kubernetes of NV_NODES nodes
# (default 1), deploys NativeVirt into it, boots the demo VM and shows its console. Then it stays
# in the foreground: Ctrl-C stops everything it started (hack/cluster/down.sh: by PID, no mounts
# or links left).
#
#   make run                 # or hack/run.sh
#   make run NODES=2         # two kubelet nodes on this machine (or NV_NODES=2 hack/run.sh)
#   NV_RUN_DETACH=1 make run # leave the cluster running and return (make down stops it)
#   make run HA=1            # the HA installation (or NV_HA=1 hack/run.sh): hack/deploy-local.sh
#                            # deploys artifacts/local/ha, the production overlay (docs/reliability.md)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cluster/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/cluster/control-plane.sh"
source "$(dirname "${BASH_SOURCE[0]}")/cluster/addons.sh"
cd "$NV_ROOT"

[[ $(id -u) -eq 0 ]] || nv_die "make run needs root (packages, bridge, containerd, kubelet)"
nv_check_nodes
export NV_NODES

KUBECTL=("$NV_BIN/kubectl" --kubeconfig "$NV_KUBECONFIG")
NATIVEVIRT=("$NV_BIN/nativevirt" --kubeconfig "$NV_KUBECONFIG")
DEMO=vm-demo
started_cluster=0

addon_builds=""
stop_all() {
	trap - INT TERM EXIT
	if [[ -n $addon_builds ]]; then
		kill -- "-$addon_builds" 2>/dev/null || true
		wait "$addon_builds" 2>/dev/null || true
	fi
	if [[ $started_cluster == 1 ]]; then
		echo
		nv_log "stopping the local cluster"
		"$NV_ROOT/hack/cluster/down.sh" || true
	fi
	exit "${1:-0}"
}
trap 'stop_all 130' INT TERM
# shellcheck disable=SC2154 # rc is assigned in the trap itself.
trap 'rc=$?; [[ $rc == 0 ]] || stop_all $rc' EXIT

# The cluster addons' images (CoreDNS, local-path-provisioner: Go builds from the module proxy,
# ~3 min cold) build in the background meanwhile: on a fresh machine the packages step mostly
# waits on apt. up.sh then finds them built (its own build is a cache hit) and imports them.
mkdir -p "$NV_LOGS"
# In a session of its own, so that Ctrl-C stops the whole build (its process group) and only it.
# shellcheck disable=SC2016 # $1 is expanded by the inner shell, on purpose.
NV_IMAGE_NO_IMPORT=1 setsid bash -c '"$1/hack/images/build-coredns.sh" && "$1/hack/images/build-local-path-provisioner.sh"' \
	_ "$NV_ROOT" >"$NV_LOGS/addon-images.log" 2>&1 </dev/null &
addon_builds=$!
nv_step "packages"
"$NV_ROOT/hack/install-deps.sh" | sed 's/^/  /'
nv_step "build NativeVirt"
make --no-print-directory build | sed 's/^/  /'
nv_step "kubernetes binaries"
NV_BIN_DIR=$NV_BIN "$NV_ROOT/hack/build-k8s.sh" | sed 's/^/  /'
nv_step "local cluster"
if ! wait "$addon_builds"; then
	nv_log "building the addons' images in the background failed ($NV_LOGS/addon-images.log); up.sh builds them again"
fi
addon_builds=""
nv_cluster_up || started_cluster=1
"$NV_ROOT/hack/cluster/up.sh" | sed 's/^/  /'
nv_step "images"
make --no-print-directory images | sed 's/^/  /'
nv_step "deploy NativeVirt"
NV_SKIP_BUILD=1 NV_SKIP_IMAGES=1 "$NV_ROOT/hack/deploy-local.sh" | sed 's/^/  /'

nv_step "demo VM"
# The VM outlives `make down` (the apiserver's etcd is kept): applying the manifest again would set
# its runStrategy back to Halted and stop a VM that a previous run started, so it is created only
# when missing, and started only when halted.
if ! "${KUBECTL[@]}" get vm "$DEMO" >/dev/null 2>&1; then
	"${KUBECTL[@]}" apply -f artifacts/examples/vm-demo.yaml | sed 's/^/  /'
fi
vmi_phase() { "${KUBECTL[@]}" get vmi "$DEMO" -o jsonpath='{.status.phase}' 2>/dev/null; }
strategy=$("${KUBECTL[@]}" get vm "$DEMO" -o jsonpath='{.spec.runStrategy}')
if [[ $strategy == Halted || -z $strategy ]]; then
	"${NATIVEVIRT[@]}" start "$DEMO" 2>&1 | sed 's/^/  /'
else
	nv_log "$DEMO has runStrategy $strategy: not starting it again"
fi
demo_running() { [[ $(vmi_phase) == Running ]]; }
if ! nv_wait_for 300 "VMI $DEMO Running" demo_running; then
	"${KUBECTL[@]}" get vm,vmi,pods -o wide >&2 || true
	nv_die "the demo VM did not reach Running"
fi

nv_step "console"
# The guest prints its prompt on the serial console once its init is done; poke it until it answers.
console_lines() { { sleep 1; printf '\n'; sleep 1; printf 'uname -sr; cat /proc/uptime\n'; sleep 2; } |
	timeout 15 "${NATIVEVIRT[@]}" console "$DEMO" 2>/dev/null | tr -d '\r' | sed 's/\x1b\[[0-9;]*[A-Za-z]//g'; }
prompt_seen() { out=$(console_lines) && grep -q 'demo:~# ' <<<"$out"; }
out=""
if nv_wait_for 180 "the demo guest's shell prompt" prompt_seen; then
	echo "--- last console lines of $DEMO ---"
	tail -n 6 <<<"$out"
	echo "-----------------------------------"
else
	nv_log "warning: no shell prompt on the console yet (the guest may still be booting)"
fi
nv_step_report
"${KUBECTL[@]}" get nodes -o wide
echo
"${KUBECTL[@]}" get vm,vmi,pods -o wide

cat <<EOT

NativeVirt is running. In another terminal:
  export KUBECONFIG=$NV_KUBECONFIG
  export PATH=$NV_BIN:\$PATH
  kubectl get vm,vmi,pods -o wide
  nativevirt console $DEMO            # Ctrl+] quits
  nativevirt vnc $DEMO --proxy-only   # prints a local VNC port
  nativevirt stop $DEMO; nativevirt start $DEMO
  nativevirt expose vm $DEMO --port 80 --target-port 8080
  curl http://\$(kubectl get svc $DEMO -o jsonpath='{.spec.clusterIP}')/
  kubectl explain vm.spec
EOT

if [[ ${NV_RUN_DETACH:-0} == 1 ]]; then
	trap - INT TERM EXIT
	echo "Detached: the cluster keeps running; 'make down' stops it."
	exit 0
fi
if [[ $started_cluster == 1 ]]; then
	echo "Press Ctrl-C to stop everything."
else
	echo "The cluster was already up before this run: Ctrl-C leaves it running ('make down' stops it)."
fi
while true; do sleep 3600 & wait $!; done

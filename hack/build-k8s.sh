#!/usr/bin/env bash
# Builds the Kubernetes components of the local cluster from the Go module proxy:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy and kubectl, into
# _output/bin/ (override with NV_BIN_DIR), with the version stamped so that kubectl and
# client-go can parse the server version.
#
# The sources come from the separate tools module hack/tools/k8s (k8s.io/kubernetes with every
# staging module replaced by its v0.x release). A stamp file records what was built; when the
# binaries exist and the stamp matches, the script returns at once. Cold: ~12 min on 2 cores.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=$ROOT/hack/tools/k8s
BIN=${NV_BIN_DIR:-$ROOT/_output/bin}
export PATH=/usr/local/go/bin:$PATH
export GOWORK=off CGO_ENABLED=0

# The version is read from the tools module so that there is one place to bump it.
K8S_VERSION=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$TOOLS/go.mod")
if [[ -z $K8S_VERSION ]]; then
	echo "build-k8s: cannot read the k8s.io/kubernetes version from $TOOLS/go.mod" >&2
	exit 1
fi
major=${K8S_VERSION#v}; major=${major%%.*}
minor=${K8S_VERSION#v*.}; minor=${minor%%.*}
# Fixed, so that two builds of the same sources are identical.
BUILD_DATE=2026-01-01T00:00:00Z
COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
	ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$BUILD_DATE"
done

t0=$(date +%s)
step() { echo "[build-k8s +$(($(date +%s) - t0))s] $*"; }

# What determines the output: the module graph, the flags and the Go toolchain.
stamp=$({
	cat "$TOOLS/go.mod" "$TOOLS/go.sum"
	echo "$ldflags"
	go version
	echo "${COMPONENTS[*]}"
} | sha256sum | cut -d' ' -f1)
stampfile=$BIN/.k8s-build-stamp

uptodate() {
	[[ -f $stampfile && $(cat "$stampfile") == "$stamp" ]] || return 1
	local c
	for c in "${COMPONENTS[@]}"; do
		[[ -x $BIN/$c ]] || return 1
	done
}

if uptodate; then
	step "Kubernetes $K8S_VERSION binaries up to date in $BIN"
	exit 0
fi

mkdir -p "$BIN"
rm -f "$stampfile"
step "building Kubernetes $K8S_VERSION (${COMPONENTS[*]}) into $BIN; cold: ~12 min on 2 cores"
pkgs=()
for c in "${COMPONENTS[@]}"; do
	pkgs+=("k8s.io/kubernetes/cmd/$c")
done
(cd "$TOOLS" && go build -mod=readonly -trimpath -ldflags "$ldflags" -o "$BIN/" "${pkgs[@]}")
echo "$stamp" >"$stampfile"
step "done: $("$BIN/kubectl" version --client 2>/dev/null | head -1)"

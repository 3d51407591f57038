#!/usr/bin/env bash
# Regenerates NativeVirt's generated code with k8s.io/code-generator's
# kube_codegen.sh (the version pinned in go.mod):
#   pkg/apis/*/*/zz_generated.{deepcopy,defaults,model_name}.go (kubevirt.io, instancetype.kubevirt.io,
#     cdi.kubevirt.io, upload.cdi.kubevirt.io)
#   pkg/generated/openapi/zz_generated.openapi.go
#   pkg/client/{clientset,listers,informers,applyconfiguration}
#
# UPDATE_API_KNOWN_VIOLATIONS=true rewrites hack/api-violations.list instead
# of failing when the API rule report changes.
# CODEGEN_ROOT=<dir> generates into a copy of the tree at <dir> (used by
# hack/verify-codegen.sh); the default is the repository itself.

set -o errexit
set -o nounset
set -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
ROOT="${CODEGEN_ROOT:-${REPO_ROOT}}"
MODULE="github.com/nativevirt/nativevirt"
BOILERPLATE="${REPO_ROOT}/hack/boilerplate.go.txt"

cd "${ROOT}"

# The generators are built from code-generator's own go.mod; keep the
# binaries per project so that other checkouts cannot shadow them.
export GOBIN="${REPO_ROOT}/_output/tools/bin"
mkdir -p "${GOBIN}"

# `go list -m` names the module's directory only once it is in the module cache: on a fresh
# machine nothing has downloaded it yet.
go mod download k8s.io/code-generator
CODEGEN_PKG="$(go list -m -f '{{.Dir}}' k8s.io/code-generator)"
if [[ -z ${CODEGEN_PKG} || ! -f ${CODEGEN_PKG}/kube_codegen.sh ]]; then
	echo "update-codegen: k8s.io/code-generator is not in the module cache (${CODEGEN_PKG:-no directory})" >&2
	exit 1
fi
# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"
# openapi-gen must never write into the (read-only) module cache.
KUBE_CODEGEN_READONLY_PKGS+=(k8s.io/api/core/v1 k8s.io/api/autoscaling/v1)

report_args=(--report-filename "${ROOT}/hack/api-violations.list")
if [[ "${UPDATE_API_KNOWN_VIOLATIONS:-}" == "true" ]]; then
    report_args+=(--update-report)
fi

kube::codegen::gen_helpers \
    --boilerplate "${BOILERPLATE}" \
    "${ROOT}/pkg/apis"

kube::codegen::gen_openapi \
    --output-dir "${ROOT}/pkg/generated/openapi" \
    --output-pkg "${MODULE}/pkg/generated/openapi" \
    --output-model-name-file zz_generated.model_name.go \
    --extra-pkgs k8s.io/api/core/v1 \
    --extra-pkgs k8s.io/api/autoscaling/v1 \
    --extra-pkgs k8s.io/apimachinery/pkg/util/intstr \
    "${report_args[@]}" \
    --boilerplate "${BOILERPLATE}" \
    "${ROOT}/pkg/apis"

# applyconfiguration-gen learns list types and map keys from an OpenAPI v2
# document of the generated definitions.
schema="$(mktemp -t nativevirt-models-schema.XXXXXX)"
trap 'rm -f "${schema}"' EXIT
go run ./pkg/generated/openapi/cmd/models-schema > "${schema}"

# Fields of Kubernetes core types use client-go's apply configurations.
core_types=(
    Affinity DownwardAPIVolumeFile ExecAction HTTPGetAction LocalObjectReference
    PersistentVolumeClaimSpec PersistentVolumeClaimVolumeSource PodDNSConfig
    PodResourceClaim ResourceRequirements TCPSocketAction Toleration TopologySpreadConstraint
    TypedLocalObjectReference TypedObjectReference VolumeResourceRequirements
)
externals=""
for t in "${core_types[@]}"; do
    externals+="${externals:+,}k8s.io/api/core/v1.${t}:k8s.io/client-go/applyconfigurations/core/v1"
done

kube::codegen::gen_client \
    --with-watch \
    --with-applyconfig \
    --applyconfig-openapi-schema "${schema}" \
    --applyconfig-externals "${externals}" \
    --output-dir "${ROOT}/pkg/client" \
    --output-pkg "${MODULE}/pkg/client" \
    --boilerplate "${BOILERPLATE}" \
    "${ROOT}/pkg/apis"

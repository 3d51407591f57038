#!/usr/bin/env bash
# Fails when the committed generated code differs from what
# hack/update-codegen.sh produces. The generators run in a scratch copy of
# the inputs, so the working tree is never modified.

set -o errexit
set -o nounset
set -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"

scratch="$(mktemp -d -t nativevirt-verify-codegen.XXXXXX)"
trap 'rm -rf "${scratch}"' EXIT

cd "${REPO_ROOT}"
mkdir -p "${scratch}/pkg" "${scratch}/hack"
cp go.mod go.sum "${scratch}/"
cp hack/boilerplate.go.txt hack/api-violations.list "${scratch}/hack/"
for dir in pkg/apis pkg/generated pkg/client; do
    if [[ -d "${dir}" ]]; then
        cp -a "${dir}" "${scratch}/pkg/"
    fi
done

CODEGEN_ROOT="${scratch}" "${REPO_ROOT}/hack/update-codegen.sh"

# Generated paths: zz_generated.* files under pkg/apis (hand-written files
# there may change while this runs), the OpenAPI and client trees, and the
# API rule report.
generated=(pkg/generated pkg/client hack/api-violations.list)
while IFS= read -r -d '' f; do
    generated+=("${f}")
done < <(cd "${REPO_ROOT}" && find pkg/apis -name 'zz_generated.*' -print0; \
         cd "${scratch}" && find pkg/apis -name 'zz_generated.*' -print0)

status=0
for path in $(printf '%s\n' "${generated[@]}" | LC_ALL=C sort -u); do
    if ! diff -Nru "${REPO_ROOT}/${path}" "${scratch}/${path}"; then
        status=1
    fi
done
if [[ "${status}" != 0 ]]; then
    echo "ERROR: generated code is out of date; run hack/update-codegen.sh" >&2
    exit 1
fi
echo "generated code is up to date"

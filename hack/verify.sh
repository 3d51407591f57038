#!/usr/bin/env bash
# make verify: formatting, vet and generated-code drift. Fails on the first problem found.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(git ls-files '*.go' | xargs gofmt -l)
if [[ -n "${unformatted}" ]]; then
    echo "not gofmt-ed:"; echo "${unformatted}"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== generated code"
hack/verify-codegen.sh
echo "verify: ok"

#!/usr/bin/env bash
# make verify: formatting, vet, linters (staticcheck, shellcheck) and generated-code drift. Fails on
# the first problem found.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(git ls-files '*.go' | xargs gofmt -l)
if [[ -n "${unformatted}" ]]; then
    echo "not gofmt-ed:"; echo "${unformatted}"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== staticcheck"
# The checks are in staticcheck.conf. Generated packages are left out: their code is the
# generators', and the step below checks that it is what they produce.
module=$(go list -m)
mapfile -t pkgs < <(go list ./... | grep -v -E "^${module}/pkg/(client/|generated/openapi$)")
go tool staticcheck "${pkgs[@]}"

echo "== shellcheck"
# .shellcheckrc lets it follow the files that scripts source.
git ls-files 'hack/*.sh' | xargs shellcheck

echo "== generated code"
hack/verify-codegen.sh
echo "verify: ok"

#!/usr/bin/env bash
# Issues a serving certificate for an aggregated apiserver of the local cluster.
#
#   hack/cluster/serving-cert.sh OUT_DIR DNS_NAME [DNS_NAME...]
#   e.g. hack/cluster/serving-cert.sh _output/local/certs/nativevirt-apiserver \
#          nativevirt-apiserver.nativevirt.svc nativevirt-apiserver.nativevirt.svc.cluster.local
#
# Writes OUT_DIR/tls.crt, tls.key (signed by the cluster's serving CA, made on first use) and
# ca.crt, and prints the base64 CA bundle for APIService.spec.caBundle on stdout. Idempotent:
# an existing cert for the same names and CA is kept.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/pki.sh"
[[ $# -ge 2 ]] || { sed -n '4,6p' "${BASH_SOURCE[0]}" >&2; exit 2; }
nv_serving_cert "$@"

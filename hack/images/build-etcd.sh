#!/usr/bin/env bash
# Builds localhost/etcd:dev, etcd's server at the version nativevirt-apiserver embeds
# (hack/tools/etcd), into _output/images/etcd.tar and imports it into the running nodes. The HA
# installation of the local cluster runs it (artifacts/local/ha, hack/deploy-local.sh with NV_HA=1).
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/build-tool-image.sh" etcd . etcd localhost/etcd:dev

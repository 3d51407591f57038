#!/usr/bin/env bash
# Builds localhost/local-path-provisioner:dev, the local cluster's dynamic storage provisioner
# (rancher's local-path-provisioner, hack/tools/local-path-provisioner), into
# _output/images/local-path-provisioner.tar and imports it into the running nodes. Its helper
# pods run localhost/busybox:dev (build-busybox.sh).
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/build-tool-image.sh" local-path-provisioner \
	github.com/rancher/local-path-provisioner local-path-provisioner localhost/local-path-provisioner:dev

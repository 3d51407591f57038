#!/usr/bin/env bash
# Builds localhost/coredns:dev, the local cluster's DNS server (CoreDNS with the plugins of a
# cluster DNS, hack/tools/coredns), into _output/images/coredns.tar and imports it into the
# running nodes.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/build-tool-image.sh" coredns . coredns localhost/coredns:dev

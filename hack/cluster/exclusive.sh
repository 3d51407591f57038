#!/usr/bin/env bash
# Runs a command while holding the machine's local-cluster lock. A machine has one local cluster
# (bridge nv0, /run/nativevirt, fixed loopback ports), so make run, make test-e2e and make bench
# take turns instead of restarting the cluster under each other.
#
#   hack/cluster/exclusive.sh COMMAND [ARG...]
#   NV_CLUSTER_LOCK_WAIT=600 (seconds to wait for the lock; default 3600)
#
# Nested calls (a script holding the lock runs `make run`, which takes it too) run their command
# at once: the outer call marks its children with NV_CLUSTER_LOCK_HELD.
set -euo pipefail
lock=${NV_CLUSTER_LOCK:-/run/lock/nativevirt-cluster.lock}
wait=${NV_CLUSTER_LOCK_WAIT:-3600}
if [[ ${NV_CLUSTER_LOCK_HELD:-} == "$lock" ]]; then
	exec "$@"
fi
export NV_CLUSTER_LOCK_HELD=$lock
mkdir -p "$(dirname "$lock")"
if ! flock -n "$lock" true; then
	echo "exclusive.sh: another run holds the local cluster ($lock); waiting up to ${wait}s" >&2
fi
# -o: the lock belongs to flock itself, not to the daemons the command leaves running.
exec flock -o -w "$wait" "$lock" "$@"

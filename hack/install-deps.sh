#!/usr/bin/env bash
# Installs the Debian packages NativeVirt's local environment needs, idempotently.
#
#   hack/install-deps.sh              # every list in hack/deps/*.list
#   hack/install-deps.sh cluster      # only hack/deps/cluster.list
#
# Each list names the packages of one purpose (see hack/deps/README.md). Packages already
# installed are detected with dpkg and skipped, so a warm run is a fast no-op; `apt-get update`
# runs only when something is missing. Services the packages ship are never started here: the
# local cluster runs its own private instances.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEPS=$ROOT/hack/deps
t0=$(date +%s)
step() { echo "[deps +$(($(date +%s) - t0))s] $*"; }

if [[ $# -gt 0 ]]; then
	lists=()
	for p in "$@"; do
		lists+=("$DEPS/$p.list")
	done
else
	lists=("$DEPS"/*.list)
fi

# installed PKG: true when dpkg knows PKG as fully installed.
installed() {
	[[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

missing=()
for list in "${lists[@]}"; do
	if [[ ! -f $list ]]; then
		echo "install-deps: no such list: $list" >&2
		exit 1
	fi
	purpose=$(basename "$list" .list)
	want=()
	while read -r pkg _; do
		[[ -z $pkg || $pkg == \#* ]] && continue
		want+=("$pkg")
	done <"$list"
	need=()
	for pkg in "${want[@]}"; do
		installed "$pkg" || need+=("$pkg")
	done
	if [[ ${#need[@]} -eq 0 ]]; then
		step "$purpose: ${#want[@]} packages present"
	else
		step "$purpose: missing ${need[*]}"
		missing+=("${need[@]}")
	fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
	step "nothing to install"
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "install-deps: root is needed to install: ${missing[*]}" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_opts=(-o DPkg::Lock::Timeout=600 -q)
step "apt-get update"
apt-get "${apt_opts[@]}" update >/dev/null
step "apt-get install ${missing[*]}"
# A policy-rc.d that denies every action keeps package scripts from starting system-wide
# daemons (etcd, containerd) that would hold the default ports and paths; it is removed again
# at exit unless one was present before.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod +x "$policy"
	trap 'rm -f "$policy"' EXIT
fi
apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null
for pkg in "${missing[@]}"; do
	if ! installed "$pkg"; then
		echo "install-deps: $pkg did not install" >&2
		exit 1
	fi
done
step "installed ${#missing[@]} packages"

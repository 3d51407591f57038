#!/usr/bin/env bash
# Builds localhost/nativevirt:dev, the image of NativeVirt's components, from the binaries
# _output/bin/nativevirt-* (build them first: make build), into _output/images/nativevirt.tar,
# and imports it when the local cluster's containerd runs.
#
#   hack/images/build-nativevirt.sh [BINARY...]    # default: _output/bin/nativevirt-*
#
# The binaries land in /usr/bin of a minimal rootfs (/etc/passwd with root and nonroot 65532,
# /tmp). Static binaries are copied as they are; a dynamically linked one (cgo, e.g. libvirt)
# brings the shared libraries ldd resolves for it. The image's default command is
# nativevirt-apiserver when present; manifests name the command of each component.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
REF=${NV_IMAGE:-localhost/nativevirt:dev}

if [[ $# -gt 0 ]]; then
	bins=("$@")
else
	shopt -s nullglob
	bins=()
	for b in "$NV_BIN"/nativevirt-*; do
		# The benchmark driver runs on the host, never in the cluster.
		[[ $(basename "$b") == nativevirt-bench ]] || bins+=("$b")
	done
	shopt -u nullglob
fi
[[ ${#bins[@]} -gt 0 ]] || nv_die "no binaries: $NV_BIN/nativevirt-* is empty (make build)"

dir=$NV_ROOT/_output/images/nativevirt
rm -rf "$dir/rootfs"
mkdir -p "$dir/rootfs"/{usr/bin,etc,tmp,proc,sys,dev,home/nonroot}
chmod 1777 "$dir/rootfs/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dir/rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$dir/rootfs/etc/group"
chown 65532:65532 "$dir/rootfs/home/nonroot"

cmd=""
for bin in "${bins[@]}"; do
	[[ -f $bin && -x $bin ]] || nv_die "$bin is not an executable file"
	name=$(basename "$bin")
	cp "$bin" "$dir/rootfs/usr/bin/$name"
	if [[ $(ldd "$bin" 2>&1 || true) == *"not a dynamic executable"* ]]; then
		echo "build-nativevirt: $name (static)"
	else
		echo "build-nativevirt: $name (dynamic: adding its shared libraries)"
		for lib in $(ldd "$bin" | grep -oE '/[^ ]+'); do
			[[ -e $dir/rootfs$lib ]] && continue
			mkdir -p "$dir/rootfs$(dirname "$lib")"
			cp -L "$lib" "$dir/rootfs$lib"
		done
	fi
	if [[ $name == nativevirt-apiserver || -z $cmd ]]; then
		cmd="[\"/usr/bin/$name\"]"
	fi
done
"$NV_ROOT/hack/images/mkimage.sh" "$dir/rootfs" "$REF" "$dir.tar" "$cmd"
if [[ -S $NV_CONTAINERD_SOCK ]]; then
	"$NV_ROOT/hack/images/import.sh" "$dir.tar"
fi

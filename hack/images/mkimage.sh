#!/usr/bin/env bash
# Packs a directory into a single-layer image tarball in `docker save` format, which
# `ctr images import` (hack/images/import.sh) loads without any registry.
#
#   hack/images/mkimage.sh ROOTFS REF OUT_TAR CMD_JSON
#   e.g. hack/images/mkimage.sh _output/images/busybox/rootfs localhost/busybox:dev \
#          _output/images/busybox.tar '["/bin/sh"]'
#
# The tarball is reproducible: files are sorted, owned by root and dated at the epoch, so the
# same ROOTFS always gives the same layer and image digests (and a re-import is a no-op).
# MKIMAGE_KEEP_OWNERS=1 keeps the numeric owners of ROOTFS instead (e.g. a containerDisk's
# /disk/disk.img owned by 107:107, as KubeVirt's containerDisk images have it).
set -euo pipefail
if [[ $# -ne 4 ]]; then
	sed -n '5,7p' "${BASH_SOURCE[0]}" >&2
	exit 2
fi
rootfs=$1 ref=$2 out=$3 cmd=$4
[[ -d $rootfs ]] || { echo "mkimage: $rootfs is not a directory" >&2; exit 1; }
[[ $cmd == \[*\] ]] || { echo "mkimage: CMD_JSON must be a JSON array, got: $cmd" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
created=1970-01-01T00:00:00Z

owners=(--owner=0 --group=0)
[[ ${MKIMAGE_KEEP_OWNERS:-0} == 1 ]] && owners=()
tar --sort=name --mtime=@0 "${owners[@]}" --numeric-owner --format=posix \
	--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
	-C "$rootfs" -cf "$work/layer.tar" .
layer=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
mkdir "$work/$layer"
mv "$work/layer.tar" "$work/$layer/layer.tar"

printf '{"architecture":"amd64","os":"linux","created":"%s","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":%s,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"%s","created_by":"hack/images/mkimage.sh"}]}' \
	"$created" "$cmd" "$layer" "$created" >"$work/config.json"
config=$(sha256sum "$work/config.json" | cut -d' ' -f1)
mv "$work/config.json" "$work/$config.json"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$config" "$ref" "$layer" >"$work/manifest.json"

mkdir -p "$(dirname "$out")"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work" \
	-cf "$out.tmp" manifest.json "$config.json" "$layer"
mv "$out.tmp" "$out"
echo "mkimage: $ref -> $out (config sha256:$config)"

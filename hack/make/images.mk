# Local container images (no registry: tarballs in _output/images, imported into the local
# cluster's containerd when it runs). Each script caches its work and rebuilds only what changed.
# Included by the top-level Makefile.

.PHONY: images image-nativevirt image-launcher image-handler image-demo-disk guest-image

images: image-nativevirt image-launcher image-handler image-demo-disk ## Build the nativevirt, launcher, handler and demo images
	@ls -s --block-size=M $(OUT)/images/*.tar

image-nativevirt: build ## Build localhost/nativevirt:dev from _output/bin.
	hack/images/build-nativevirt.sh

image-launcher: deps ## Build localhost/nativevirt-launcher:dev (debootstrap'd libvirt + QEMU, the launcher).
	hack/images/build-launcher.sh
	@# make build links nativevirt-copy-disk statically too (standard library only): keep it so.
	@if [[ -f $(BIN)/nativevirt-copy-disk ]] && ldd $(BIN)/nativevirt-copy-disk >/dev/null 2>&1; then \
		echo "$(BIN)/nativevirt-copy-disk is dynamically linked: it must stay static" >&2; exit 1; fi

image-handler: image-launcher ## Build localhost/nativevirt-handler:dev (the node agent on the launcher's rootfs).
	hack/images/build-handler.sh

image-demo-disk: deps ## Build the demo guest and its containerDisk image localhost/nativevirt-demo-disk:dev.
	hack/images/build-demo-disk.sh

guest-image: deps ## Build the demo guest's kernel + initramfs only (_output/images/guest).
	hack/images/build-guest.sh

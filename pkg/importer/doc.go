// Package importer fills one claim with a disk image, the way CDI's importer does, for
// KubeVirt's layout: `disk.img` (raw) at the root of a Filesystem claim, or the raw image on a
// Block claim's device. Sources: an HTTP(S) URL, a containerDisk image pulled from a registry
// (its first file under /disk, streamed out of its layer), a file another container put in the
// pod (a registry image's disk copied out of it on the node), a blank disk, and a clone source
// served by another importer pod (Serve). Formats: raw, qcow2 (and whatever else qemu-img reads), iso;
// gz and xz compressed.
//
// A Filesystem claim never holds a half-written `disk.img`: the image is written to
// `disk.img.part` and renamed once complete. Errors that retrying cannot fix (not an image, an
// image bigger than the claim) are Permanent; the command reports them in the pod's
// termination message and ends successfully so that the kubelet does not retry them, while
// other errors end the container with a failure, which the kubelet retries with back-off.
package importer

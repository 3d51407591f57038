// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.nativevirt.nativevirt.pkg.apis.kubevirt.v1
// +k8s:defaulter-gen=TypeMeta
// +groupName=kubevirt.io

// Package v1 holds NativeVirt's Go types for the kubevirt.io API group.
//
// The types are NativeVirt's own, but their JSON is identical to KubeVirt's
// kubevirt.io/v1 for every field modelled here, so KubeVirt manifests and
// clients work unchanged. The same Go types serve kubevirt.io/v1,
// kubevirt.io/v1alpha3 and the internal version (see package install), which
// is why no conversion functions exist.
//
// Differences from KubeVirt's Go types that do not show on the wire:
// unsigned integers are replaced by signed ones of the same JSON name
// (structured-merge-diff cannot handle uint64), and the named lists (disks,
// volumes, interfaces, networks) carry merge keys for strategic merge patch
// and server-side apply.
package v1

// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.nativevirt.nativevirt.pkg.apis.instancetype.v1beta1
// +groupName=instancetype.kubevirt.io

// Package v1beta1 holds NativeVirt's Go types for the instancetype.kubevirt.io API group:
// instance types (the resources and CPU a VirtualMachine gets) and preferences (the defaults it
// gets), each namespaced and cluster-wide.
//
// The types are NativeVirt's own; their JSON is identical to KubeVirt's instancetype.kubevirt.io/v1beta1,
// so KubeVirt's manifests (common-instancetypes among them), virtctl and Go client work unchanged.
// As in package kubevirt.io/v1, unsigned integers are signed ones of the same JSON name
// (structured-merge-diff cannot handle every unsigned width). The same Go types serve v1beta1 and
// the internal version (see package install): no conversion functions exist.
package v1beta1

// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.nativevirt.nativevirt.pkg.apis.cdi.v1beta1
// +groupName=cdi.kubevirt.io

// Package v1beta1 holds NativeVirt's Go types for CDI's user-facing API group cdi.kubevirt.io:
// DataVolumes (a claim and where its data comes from), DataSources (named import or clone
// sources), StorageProfiles (per storage class claim defaults) and CDIConfig (the cluster's
// settings of CDI, one object named `config`).
//
// The types are NativeVirt's own; their JSON (field names, omitempty, types) is identical to
// CDI's kubevirt.io/containerized-data-importer-api core/v1beta1 for every field included here,
// so manifests written for CDI, KubeVirt's virtctl and CDI's Go client work unchanged. Named lists
// carry merge keys where CDI's are lists of named things (conditions, keyed by type). The same Go
// types serve v1beta1 and the internal version (see package install): no conversion functions.
package v1beta1

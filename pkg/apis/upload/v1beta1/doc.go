// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.nativevirt.nativevirt.pkg.apis.upload.v1beta1
// +groupName=upload.cdi.kubevirt.io

// Package v1beta1 holds NativeVirt's Go types for CDI's upload.cdi.kubevirt.io API group: the
// UploadTokenRequest, which trades the right to create one in a namespace for a short-lived token
// the upload proxy accepts for one claim of that namespace. Its JSON is identical to CDI's
// upload/v1beta1, so `virtctl image-upload` works unchanged.
package v1beta1

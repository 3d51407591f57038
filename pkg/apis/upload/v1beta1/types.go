package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UploadTokenRequest asks for a token to upload data into one claim of the request's namespace.
// It is never stored: the answer to its creation carries the token in status.token.
//
// +genclient
// +genclient:onlyVerbs=create
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type UploadTokenRequest struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata"`
	// Spec names the claim to upload to.
	Spec UploadTokenRequestSpec `json:"spec"`
	// Status holds the token; the server writes it, a request leaves it out.
	// +optional
	Status UploadTokenRequestStatus `json:"status"`
}

// UploadTokenRequestSpec names the claim to upload to.
type UploadTokenRequestSpec struct {
	// PvcName is the name of the PersistentVolumeClaim (or DataVolume) to upload to.
	PvcName string `json:"pvcName"`
}

// UploadTokenRequestStatus holds the token.
type UploadTokenRequestStatus struct {
	// Token is the bearer token to send to the upload proxy (Authorization: Bearer <token>); it
	// is valid for five minutes, for the requested claim of the request's namespace only.
	// +optional
	Token string `json:"token,omitempty"`
}

// UploadTokenRequestList is a list of UploadTokenRequests.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type UploadTokenRequestList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the requests of the list.
	Items []UploadTokenRequest `json:"items"`
}

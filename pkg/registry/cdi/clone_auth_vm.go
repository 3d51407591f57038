package cdi

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// AuthorizeCloneSpec applies CDI's clone authorization to a DataVolume spec that is not created
// by the requester itself: a VirtualMachine's dataVolumeTemplate, which the VM controller turns
// into a DataVolume later. The requesting user (from ctx) must be allowed to create
// datavolumes/source in the source's namespace; name is the DataVolume to be.
func AuthorizeCloneSpec(ctx context.Context, authz authorizer.Authorizer, name string, spec *v1beta1.DataVolumeSpec) error {
	return authorizeClone(ctx, authz, &v1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: *spec})
}

package cdi

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// dataVolumeREST is the datavolumes endpoint with CDI's clone authorization: creating a
// DataVolume that clones (source.pvc, source.snapshot, or a sourceRef to a DataSource) needs
// `create` on datavolumes/source in the source's namespace, as CDI's webhook asks with a
// SubjectAccessReview. Without it a user could copy any namespace's disks into their own.
type dataVolumeREST struct {
	*store.REST
	authz authorizer.Authorizer
}

var _ rest.Creater = &dataVolumeREST{}

// Create checks the clone authorization, then creates as the store does.
func (r *dataVolumeREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc,
	options *metav1.CreateOptions) (runtime.Object, error) {
	if dv, ok := obj.(*v1beta1.DataVolume); ok && r.authz != nil {
		if err := authorizeClone(ctx, r.authz, dv); err != nil {
			return nil, err
		}
	}
	return r.REST.Create(ctx, obj, createValidation, options)
}

// cloneSource returns the namespace and name a DataVolume clones from (ok false: no clone).
// A DataSource is checked in its own namespace (where golden images and the right to clone
// them live); the DataSource's claim or snapshot is resolved when the clone runs.
func cloneSource(dv *v1beta1.DataVolume, namespace string) (ns, name string, ok bool) {
	switch {
	case dv.Spec.Source != nil && dv.Spec.Source.PVC != nil:
		return dv.Spec.Source.PVC.Namespace, dv.Spec.Source.PVC.Name, true
	case dv.Spec.Source != nil && dv.Spec.Source.Snapshot != nil:
		return dv.Spec.Source.Snapshot.Namespace, dv.Spec.Source.Snapshot.Name, true
	case dv.Spec.SourceRef != nil && dv.Spec.SourceRef.Kind == v1beta1.DataVolumeDataSource:
		ns = namespace
		if dv.Spec.SourceRef.Namespace != nil && *dv.Spec.SourceRef.Namespace != "" {
			ns = *dv.Spec.SourceRef.Namespace
		}
		return ns, dv.Spec.SourceRef.Name, true
	}
	return "", "", false
}

// authorizeClone asks the authorizer whether the requesting user may create datavolumes/source
// in the clone source's namespace.
func authorizeClone(ctx context.Context, authz authorizer.Authorizer, dv *v1beta1.DataVolume) error {
	namespace, _ := genericapirequest.NamespaceFrom(ctx)
	srcNS, srcName, ok := cloneSource(dv, namespace)
	if !ok || srcNS == "" || srcName == "" {
		return nil // not a clone, or an incomplete one that validation refuses
	}
	gr := v1beta1.Resource("datavolumes")
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return apierrors.NewForbidden(gr, dv.Name, fmt.Errorf("no user to authorize the clone from %s/%s", srcNS, srcName))
	}
	decision, reason, err := authz.Authorize(ctx, authorizer.AttributesRecord{
		User: u, Verb: "create", Namespace: srcNS, Name: srcName,
		APIGroup: v1beta1.GroupName, APIVersion: v1beta1.SchemeGroupVersion.Version,
		Resource: "datavolumes", Subresource: v1beta1.DataVolumeCloneSourceSubresource, ResourceRequest: true,
	})
	if decision == authorizer.DecisionAllow {
		return nil
	}
	msg := fmt.Sprintf("user %q may not clone from %s/%s: cloning needs create on datavolumes/source in namespace %q",
		u.GetName(), srcNS, srcName, srcNS)
	if reason != "" {
		msg += " (" + reason + ")"
	}
	if err != nil {
		msg += ": " + err.Error()
	}
	return apierrors.NewForbidden(gr, dv.Name, fmt.Errorf("%s", msg))
}

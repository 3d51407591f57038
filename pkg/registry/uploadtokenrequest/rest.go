// Package uploadtokenrequest serves upload.cdi.kubevirt.io UploadTokenRequests: like a
// TokenReview, a create-only resource that is never stored. Creating one in a namespace (which
// RBAC grants to edit and admin) returns it with status.token, a signed token for the upload
// proxy bound to that namespace and spec.pvcName (package uploadtoken).
package uploadtokenrequest

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/nativevirt/nativevirt/pkg/apis/upload/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/uploadtoken"
)

// REST issues upload tokens.
type REST struct {
	key uploadtoken.Key
	now func() time.Time
}

var (
	_ rest.Creater              = &REST{}
	_ rest.Storage              = &REST{}
	_ rest.Scoper               = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST serves UploadTokenRequests, signing tokens with key.
func NewREST(key uploadtoken.Key) *REST {
	return &REST{key: key, now: time.Now}
}

// New returns an empty UploadTokenRequest.
func (*REST) New() runtime.Object { return &v1beta1.UploadTokenRequest{} }

// Destroy releases nothing: nothing is stored.
func (*REST) Destroy() {}

// NamespaceScoped is true: a token is for a claim of the request's namespace.
func (*REST) NamespaceScoped() bool { return true }

// GetSingularName is the singular resource name discovery shows.
func (*REST) GetSingularName() string { return "uploadtokenrequest" }

// Create validates the request and answers it with a token for the named claim.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc,
	options *metav1.CreateOptions) (runtime.Object, error) {
	req, ok := obj.(*v1beta1.UploadTokenRequest)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not an UploadTokenRequest: %T", obj))
	}
	namespace, ok := genericapirequest.NamespaceFrom(ctx)
	if !ok || namespace == "" {
		return nil, apierrors.NewBadRequest("an UploadTokenRequest is created in a namespace")
	}
	if errs := Validate(req); len(errs) > 0 {
		return nil, apierrors.NewInvalid(v1beta1.Kind(v1beta1.UploadTokenRequestKind), req.Name, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, req); err != nil {
			return nil, err
		}
	}
	out := req.DeepCopy()
	out.Namespace = namespace
	now := r.now()
	out.CreationTimestamp = metav1.NewTime(now)
	out.Status = v1beta1.UploadTokenRequestStatus{}
	if options != nil && len(options.DryRun) > 0 {
		return out, nil // a dry run issues no token
	}
	token, err := r.key.Issue(namespace, req.Spec.PvcName, now)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out.Status.Token = token
	return out, nil
}

// Validate requires spec.pvcName, a claim name (DNS-1123 subdomain).
func Validate(req *v1beta1.UploadTokenRequest) field.ErrorList {
	p := field.NewPath("spec", "pvcName")
	if req.Spec.PvcName == "" {
		return field.ErrorList{field.Required(p, "the name of the claim to upload to is required")}
	}
	var errs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(req.Spec.PvcName, false) {
		errs = append(errs, field.Invalid(p, req.Spec.PvcName, msg))
	}
	return errs
}

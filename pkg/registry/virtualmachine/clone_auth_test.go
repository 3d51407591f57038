package virtualmachine

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// goldenOnly allows clones from the namespace "golden" only and counts the questions.
type goldenOnly struct{ asked []authorizer.Attributes }

func (a *goldenOnly) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	a.asked = append(a.asked, attrs)
	if attrs.GetNamespace() == "golden" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func cloneVM(sourceNS string) *kubevirtv1.VirtualMachine {
	return &kubevirtv1.VirtualMachine{Spec: kubevirtv1.VirtualMachineSpec{DataVolumeTemplates: []kubevirtv1.DataVolumeTemplateSpec{
		{ObjectMeta: metav1.ObjectMeta{Name: "http"}, Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "http://x/y"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "root"}, Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: sourceNS, Name: "fedora"}}}},
	}}}
}

func TestAuthorizeClones(t *testing.T) {
	ctx := genericapirequest.WithUser(genericapirequest.WithNamespace(context.Background(), "vms"), &user.DefaultInfo{Name: "alice"})
	a := &goldenOnly{}
	r := &REST{authz: a}
	if err := r.authorizeClones(ctx, cloneVM("golden"), nil); err != nil {
		t.Errorf("clone from golden: %v", err)
	}
	if len(a.asked) != 1 || a.asked[0].GetSubresource() != "source" || a.asked[0].GetName() != "fedora" || a.asked[0].GetUser().GetName() != "alice" {
		t.Errorf("asked %+v, want one question about datavolumes/source fedora by alice", a.asked)
	}
	err := r.authorizeClones(ctx, cloneVM("secret"), nil)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "datavolumes/source") || !strings.Contains(err.Error(), `"secret"`) {
		t.Errorf("clone from secret: %v, want 403 naming datavolumes/source in secret", err)
	}
	// An update keeps templates that were accepted before without asking again.
	a.asked = nil
	if err := r.authorizeClones(ctx, cloneVM("secret"), cloneVM("secret")); err != nil || len(a.asked) != 0 {
		t.Errorf("unchanged templates: %v, asked %d times", err, len(a.asked))
	}
	if err := r.authorizeClones(ctx, cloneVM("secret"), cloneVM("golden")); !apierrors.IsForbidden(err) {
		t.Errorf("a template changed to clone from secret: %v, want 403", err)
	}
}

package cdi

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// recordingAuthorizer allows clones from the namespace "golden" only and records what it was asked.
type recordingAuthorizer struct{ asked []authorizer.Attributes }

func (a *recordingAuthorizer) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	a.asked = append(a.asked, attrs)
	if attrs.GetNamespace() == "golden" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no RBAC rule", nil
}

func TestAuthorizeClone(t *testing.T) {
	ctx := genericapirequest.WithUser(genericapirequest.WithNamespace(context.Background(), "vms"), &user.DefaultInfo{Name: "alice"})
	golden, secret := "golden", "secret"
	cases := []struct {
		name    string
		source  *v1beta1.DataVolumeSource
		ref     *v1beta1.DataVolumeSourceRef
		allowed bool
		asked   string // namespace/name asked about; "" when nothing is asked
	}{
		{"http is no clone", &v1beta1.DataVolumeSource{HTTP: &v1beta1.DataVolumeSourceHTTP{URL: "http://x/y"}}, nil, true, ""},
		{"pvc from golden", &v1beta1.DataVolumeSource{PVC: &v1beta1.DataVolumeSourcePVC{Namespace: golden, Name: "fedora"}}, nil, true, "golden/fedora"},
		{"pvc from secret", &v1beta1.DataVolumeSource{PVC: &v1beta1.DataVolumeSourcePVC{Namespace: secret, Name: "db"}}, nil, false, "secret/db"},
		{"snapshot from secret", &v1beta1.DataVolumeSource{Snapshot: &v1beta1.DataVolumeSourceSnapshot{Namespace: secret, Name: "s"}}, nil, false, "secret/s"},
		{"DataSource in golden", nil, &v1beta1.DataVolumeSourceRef{Kind: "DataSource", Namespace: &golden, Name: "fedora"}, true, "golden/fedora"},
		{"DataSource in its own namespace", nil, &v1beta1.DataVolumeSourceRef{Kind: "DataSource", Name: "fedora"}, false, "vms/fedora"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &recordingAuthorizer{}
			dv := &v1beta1.DataVolume{Spec: v1beta1.DataVolumeSpec{Source: c.source, SourceRef: c.ref}}
			dv.Name = "disk"
			err := authorizeClone(ctx, a, dv)
			if c.allowed != (err == nil) {
				t.Fatalf("err = %v, want allowed %v", err, c.allowed)
			}
			if err != nil && !apierrors.IsForbidden(err) {
				t.Errorf("err = %v, want 403", err)
			}
			if c.asked == "" {
				if len(a.asked) != 0 {
					t.Errorf("asked %v, want nothing", a.asked)
				}
				return
			}
			if len(a.asked) != 1 {
				t.Fatalf("asked %d times", len(a.asked))
			}
			q := a.asked[0]
			if got := q.GetNamespace() + "/" + q.GetName(); got != c.asked || q.GetVerb() != "create" || q.GetResource() != "datavolumes" ||
				q.GetSubresource() != "source" || q.GetAPIGroup() != "cdi.kubevirt.io" || q.GetUser().GetName() != "alice" {
				t.Errorf("asked %+v, want create datavolumes/source on %s by alice", q, c.asked)
			}
		})
	}
	// Without a user nothing is cloned.
	dv := &v1beta1.DataVolume{Spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{PVC: &v1beta1.DataVolumeSourcePVC{Namespace: golden, Name: "f"}}}}
	if err := authorizeClone(genericapirequest.WithNamespace(context.Background(), "vms"), &recordingAuthorizer{}, dv); !apierrors.IsForbidden(err) {
		t.Errorf("without a user: %v, want 403", err)
	}
}

package uploadtokenrequest

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/nativevirt/nativevirt/pkg/apis/upload/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/uploadtoken"
)

func TestCreateIssuesABoundToken(t *testing.T) {
	key, err := uploadtoken.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	r := NewREST(key)
	ctx := genericapirequest.WithNamespace(context.Background(), "ns")
	obj, err := r.Create(ctx, &v1beta1.UploadTokenRequest{ObjectMeta: metav1.ObjectMeta{Name: "t"},
		Spec: v1beta1.UploadTokenRequestSpec{PvcName: "disk"}, Status: v1beta1.UploadTokenRequestStatus{Token: "mine"}}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := obj.(*v1beta1.UploadTokenRequest)
	if out.Namespace != "ns" || out.Status.Token == "" || out.Status.Token == "mine" {
		t.Fatalf("answer %+v", out)
	}
	if err := key.VerifyFor(out.Status.Token, "ns", "disk", time.Now()); err != nil {
		t.Errorf("token does not verify: %v", err)
	}
	if err := key.VerifyFor(out.Status.Token, "other", "disk", time.Now()); err == nil {
		t.Error("token verifies for another namespace")
	}

	dry, err := r.Create(ctx, &v1beta1.UploadTokenRequest{Spec: v1beta1.UploadTokenRequestSpec{PvcName: "disk"}}, nil,
		&metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || dry.(*v1beta1.UploadTokenRequest).Status.Token != "" {
		t.Errorf("dry run: %v %+v, want no token", err, dry)
	}
}

func TestCreateRefuses(t *testing.T) {
	key, _ := uploadtoken.NewKey()
	r := NewREST(key)
	ctx := genericapirequest.WithNamespace(context.Background(), "ns")
	for name, pvc := range map[string]string{"no claim": "", "bad claim name": "Not_A_Claim"} {
		_, err := r.Create(ctx, &v1beta1.UploadTokenRequest{Spec: v1beta1.UploadTokenRequestSpec{PvcName: pvc}}, nil, &metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: %v, want 422", name, err)
		}
	}
	if _, err := r.Create(context.Background(), &v1beta1.UploadTokenRequest{Spec: v1beta1.UploadTokenRequestSpec{PvcName: "d"}}, nil,
		&metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("without a namespace: %v, want 400", err)
	}
}

package datavolume

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

func storageDV(size string, mode *corev1.PersistentVolumeMode, access ...corev1.PersistentVolumeAccessMode) *v1beta1.DataVolume {
	s := &v1beta1.StorageSpec{AccessModes: access, VolumeMode: mode}
	if size != "" {
		s.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	}
	return &v1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", UID: "u"},
		Spec: v1beta1.DataVolumeSpec{Storage: s}}
}

var (
	localPath = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-path"}, Provisioner: "rancher.io/local-path"}
	rbdBlock  = &v1beta1.StorageProfile{Status: v1beta1.StorageProfileStatus{ClaimPropertySets: []v1beta1.ClaimPropertySet{
		{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, VolumeMode: ptr(corev1.PersistentVolumeBlock)}}}}
	rwoFS = &v1beta1.StorageProfile{Status: v1beta1.StorageProfileStatus{ClaimPropertySets: []v1beta1.ClaimPropertySet{
		{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: ptr(corev1.PersistentVolumeFilesystem)}}}}
)

func TestPlanClaim(t *testing.T) {
	gi := int64(1 << 30)
	for _, tc := range []struct {
		name      string
		dv        *v1beta1.DataVolume
		in        claimInputs
		size      int64
		imageSize int64
		mode      corev1.PersistentVolumeMode
		access    corev1.PersistentVolumeAccessMode
		wantErr   bool
	}{
		{name: "storage from the profile, with overhead", dv: storageDV("1Gi", nil), in: claimInputs{class: localPath, profile: rwoFS},
			size: 1084 << 20, imageSize: gi, mode: corev1.PersistentVolumeFilesystem, access: corev1.ReadWriteOnce},
		{name: "block from the profile: no overhead", dv: storageDV("1Gi", nil), in: claimInputs{class: localPath, profile: rbdBlock},
			size: gi, imageSize: gi, mode: corev1.PersistentVolumeBlock, access: corev1.ReadWriteMany},
		{name: "FromStorageProfile", dv: storageDV("1Gi", ptr(v1beta1.PersistentVolumeFromStorageProfile)), in: claimInputs{profile: rbdBlock},
			size: gi, imageSize: gi, mode: corev1.PersistentVolumeBlock, access: corev1.ReadWriteMany},
		{name: "explicit modes win", dv: storageDV("1Gi", ptr(corev1.PersistentVolumeFilesystem), corev1.ReadWriteOnce), in: claimInputs{profile: rbdBlock},
			size: 1084 << 20, imageSize: gi, mode: corev1.PersistentVolumeFilesystem, access: corev1.ReadWriteOnce},
		{name: "no access mode and no profile", dv: storageDV("1Gi", nil), wantErr: true},
		{name: "clone without a size", dv: storageDV("", nil, corev1.ReadWriteOnce), in: claimInputs{cloneSize: ptr(resource.MustParse("2Gi"))},
			size: 2168 << 20, imageSize: 2 * gi, mode: corev1.PersistentVolumeFilesystem, access: corev1.ReadWriteOnce},
		{name: "import without a size", dv: storageDV("", nil, corev1.ReadWriteOnce), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := planClaim(tc.dv, tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			c := plan.claim
			got := c.Spec.Resources.Requests[corev1.ResourceStorage]
			if got.Value() != tc.size || plan.imageSize != tc.imageSize {
				t.Errorf("claim %d bytes, image %d; want %d and %d", got.Value(), plan.imageSize, tc.size, tc.imageSize)
			}
			if *c.Spec.VolumeMode != tc.mode || c.Spec.AccessModes[0] != tc.access || plan.block != (tc.mode == corev1.PersistentVolumeBlock) {
				t.Errorf("modes %s %v, want %s %s", *c.Spec.VolumeMode, c.Spec.AccessModes, tc.mode, tc.access)
			}
			if !metav1.IsControlledBy(c, tc.dv) || c.Name != "d" || c.Namespace != "ns" {
				t.Errorf("claim %s/%s owners %v", c.Namespace, c.Name, c.OwnerReferences)
			}
			if tc.in.class != nil && (c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != tc.in.class.Name) {
				t.Errorf("class %v, want %s", c.Spec.StorageClassName, tc.in.class.Name)
			}
		})
	}
}

func TestPlanClaimPVC(t *testing.T) {
	dv := &v1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: v1beta1.DataVolumeSpec{PVC: &corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1000Mi")}},
	}}}
	plan, err := planClaim(dv, claimInputs{profile: rbdBlock})
	if err != nil {
		t.Fatal(err)
	}
	got := plan.claim.Spec.Resources.Requests[corev1.ResourceStorage]
	// As given; the image leaves the overhead free: 1000 MiB × 0.945, in whole sectors.
	if got.String() != "1000Mi" || *plan.claim.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || plan.imageSize != 990904320 {
		t.Errorf("claim %s %s, image %d", got.String(), *plan.claim.Spec.VolumeMode, plan.imageSize)
	}
}

func TestDefaultClass(t *testing.T) {
	older := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: metav1.Unix(1, 0),
		Annotations: map[string]string{AnnDefaultStorageClass: "true"}}}
	newer := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: metav1.Unix(2, 0),
		Annotations: map[string]string{AnnDefaultStorageClass: "true"}}}
	plain := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: metav1.Unix(3, 0)}}
	if got := defaultClass([]*storagev1.StorageClass{older, plain, newer}); got != newer {
		t.Errorf("default class %v, want the newest default b", got)
	}
	if got := defaultClass([]*storagev1.StorageClass{plain}); got != nil {
		t.Errorf("default class %v, want none", got)
	}
}

func TestAdoptable(t *testing.T) {
	dv := &v1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "d", UID: "new", Annotations: map[string]string{AnnAllowClaimAdoption: "true"}}}
	ctrl := true
	ref := func(kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{Kind: kind, Name: name, UID: types.UID(uid), Controller: &ctrl}}
	}
	claim := func(owners []metav1.OwnerReference, ann map[string]string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "d", OwnerReferences: owners, Annotations: ann}}
	}
	for _, tc := range []struct {
		name  string
		dv    *v1beta1.DataVolume
		claim *corev1.PersistentVolumeClaim
		want  bool
	}{
		{"no owner", dv, claim(nil, nil), true},
		{"the orphaned claim of an earlier DataVolume", dv, claim(ref("DataVolume", "d", "old"), nil), true},
		{"another controller", dv, claim(ref("StatefulSet", "s", "x"), nil), false},
		{"adoption not allowed", &v1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, claim(nil, nil), false},
		{"populated for it", &v1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, claim(nil, map[string]string{AnnPopulatedFor: "d"}), true},
	} {
		if got := adoptable(tc.dv, tc.claim); got != tc.want {
			t.Errorf("%s: adoptable %v, want %v", tc.name, got, tc.want)
		}
	}
}

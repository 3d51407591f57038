package storageprofile

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

func TestStatus(t *testing.T) {
	class := func(p string) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Provisioner: p}
	}
	st := Status(class("rancher.io/local-path"), &v1beta1.StorageProfileSpec{})
	if *st.StorageClass != "c" || *st.Provisioner != "rancher.io/local-path" || *st.CloneStrategy != v1beta1.CloneStrategyHostAssisted ||
		len(st.ClaimPropertySets) != 1 || st.ClaimPropertySets[0].AccessModes[0] != corev1.ReadWriteOnce ||
		*st.ClaimPropertySets[0].VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("local-path: %+v", st)
	}
	if st := Status(class("example.com/unknown"), &v1beta1.StorageProfileSpec{}); st.ClaimPropertySets != nil {
		t.Errorf("an unknown provisioner got %+v, want no claim property sets", st.ClaimPropertySets)
	}
	// The administrator's spec wins.
	block := corev1.PersistentVolumeBlock
	spec := &v1beta1.StorageProfileSpec{ClaimPropertySets: []v1beta1.ClaimPropertySet{
		{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, VolumeMode: &block}}}
	st = Status(class("rancher.io/local-path"), spec)
	if len(st.ClaimPropertySets) != 1 || *st.ClaimPropertySets[0].VolumeMode != block {
		t.Errorf("spec'd sets: %+v", st.ClaimPropertySets)
	}
	spec.ClaimPropertySets[0].AccessModes[0] = corev1.ReadOnlyMany
	if st.ClaimPropertySets[0].AccessModes[0] != corev1.ReadWriteMany {
		t.Error("the status shares the spec's slices")
	}
}

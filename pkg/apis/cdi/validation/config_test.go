package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

func TestValidateDataSource(t *testing.T) {
	cases := []struct {
		name string
		src  v1beta1.DataSourceSource
		want []string
	}{
		{"empty (a DataImportCron fills it)", v1beta1.DataSourceSource{}, nil},
		{"pvc", v1beta1.DataSourceSource{PVC: &v1beta1.DataVolumeSourcePVC{Namespace: "golden", Name: "fedora"}}, nil},
		{"pvc in its own namespace", v1beta1.DataSourceSource{PVC: &v1beta1.DataVolumeSourcePVC{Name: "fedora"}}, nil},
		{"snapshot without a name", v1beta1.DataSourceSource{Snapshot: &v1beta1.DataVolumeSourceSnapshot{Namespace: "g"}},
			[]string{"spec.source.snapshot.name: FieldValueRequired"}},
		{"two sources", v1beta1.DataSourceSource{PVC: &v1beta1.DataVolumeSourcePVC{Name: "a"}, Snapshot: &v1beta1.DataVolumeSourceSnapshot{Name: "b"}},
			[]string{"spec.source: FieldValueInvalid"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := &v1beta1.DataSource{ObjectMeta: metav1.ObjectMeta{Name: "fedora", Namespace: "ns"}, Spec: v1beta1.DataSourceSpec{Source: c.src}}
			if diff := cmp.Diff(c.want, errorFields(ValidateDataSource(ds))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateStorageProfile(t *testing.T) {
	block, odd := corev1.PersistentVolumeBlock, corev1.PersistentVolumeMode("Tape")
	strategy, badStrategy := v1beta1.CloneStrategyCsiClone, v1beta1.CDICloneStrategy("rsync")
	sp := &v1beta1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: "local-path"}, Spec: v1beta1.StorageProfileSpec{
		CloneStrategy:     &strategy,
		ClaimPropertySets: []v1beta1.ClaimPropertySet{{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: &block}},
	}}
	if errs := ValidateStorageProfile(sp); len(errs) != 0 {
		t.Errorf("valid profile refused: %v", errs)
	}
	bad := sp.DeepCopy()
	bad.Spec.CloneStrategy = &badStrategy
	bad.Spec.ClaimPropertySets = []v1beta1.ClaimPropertySet{{AccessModes: []corev1.PersistentVolumeAccessMode{"Sometimes"}, VolumeMode: &odd}, {}}
	want := []string{"spec.cloneStrategy: FieldValueNotSupported", "spec.claimPropertySets[0].accessModes[0]: FieldValueNotSupported",
		"spec.claimPropertySets[0].volumeMode: FieldValueNotSupported", "spec.claimPropertySets[1].volumeMode: FieldValueRequired"}
	if diff := cmp.Diff(want, errorFields(ValidateStorageProfile(bad))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestValidateCDIConfig(t *testing.T) {
	good := &v1beta1.CDIConfig{ObjectMeta: metav1.ObjectMeta{Name: "config"}, Spec: v1beta1.CDIConfigSpec{
		UploadProxyURLOverride: ptr("https://upload.example.com"),
		FilesystemOverhead:     &v1beta1.FilesystemOverhead{Global: "0.055", StorageClass: map[string]v1beta1.Percent{"local": "0", "nfs": "1"}},
	}}
	if errs := ValidateCDIConfig(good); len(errs) != 0 {
		t.Errorf("valid config refused: %v", errs)
	}
	bad := good.DeepCopy()
	bad.Name = "other"
	bad.Spec.FilesystemOverhead = &v1beta1.FilesystemOverhead{Global: "6%", StorageClass: map[string]v1beta1.Percent{"b": "1.5", "a": "0.1234"}}
	bad.Spec.PodResourceRequirements = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}}
	want := []string{"metadata.name: FieldValueNotSupported", "spec.filesystemOverhead.global: FieldValueInvalid",
		"spec.filesystemOverhead.storageClass[a]: FieldValueInvalid", "spec.filesystemOverhead.storageClass[b]: FieldValueInvalid",
		"spec.podResourceRequirements.limits[cpu]: FieldValueInvalid"}
	if diff := cmp.Diff(want, errorFields(ValidateCDIConfig(bad))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

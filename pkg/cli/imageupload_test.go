package cli

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestUploadURL(t *testing.T) {
	for _, tc := range []struct{ proxy, path, want string }{
		{"https://10.0.0.1:31000", uploadPathAsync, "https://10.0.0.1:31000/v1beta1/upload-async"},
		{"https://proxy.example/cdi/", uploadPathSync, "https://proxy.example/cdi/v1beta1/upload"},
		{"https://proxy.example/v1beta1/upload", uploadPathSync, "https://proxy.example/v1beta1/upload"},
	} {
		if got, err := uploadURL(tc.proxy, tc.path); err != nil || got != tc.want {
			t.Errorf("uploadURL(%q, %q) = %q, %v; want %q", tc.proxy, tc.path, got, err, tc.want)
		}
	}
}

func TestUploadDataVolume(t *testing.T) {
	u := &uploadOptions{size: "10Gi", storageClass: "fast", accessMode: "ReadWriteMany", blockVolume: true, forceBind: true}
	dv, err := u.dataVolume("fedora")
	if err != nil {
		t.Fatal(err)
	}
	st := dv.Spec.Storage
	if dv.Spec.Source.Upload == nil || st.Resources.Requests.Storage().String() != "10Gi" || *st.StorageClassName != "fast" ||
		st.AccessModes[0] != corev1.ReadWriteMany || *st.VolumeMode != corev1.PersistentVolumeBlock ||
		dv.Annotations["cdi.kubevirt.io/storage.bind.immediate.requested"] != "true" {
		t.Errorf("DataVolume %+v", dv)
	}
	for _, bad := range []*uploadOptions{{}, {size: "ten"}, {size: "1Gi", accessMode: "ReadOnlyMany"}, {size: "1Gi", volumeMode: "tape"}} {
		if _, err := bad.dataVolume("x"); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

package apiserver

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver/storage"
)

// The storage codec writes each group in its storage version: instance types in
// instancetype.kubevirt.io/v1beta1 next to VirtualMachines in kubevirt.io/v1, and reads both back.
func TestStorageCodecStoresEachGroupInItsVersion(t *testing.T) {
	codec := storage.Codec(Scheme, StorageVersions)
	it := &instancetypev1beta1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "u1.small", ResourceVersion: "3"},
		Spec: instancetypev1beta1.VirtualMachineInstancetypeSpec{
			CPU:    instancetypev1beta1.CPUInstancetype{Guest: 1},
			Memory: instancetypev1beta1.MemoryInstancetype{Guest: resource.MustParse("2Gi")},
		},
	}
	vm, err := runtime.Decode(Codecs.LegacyCodec(kubevirtv1.SchemeGroupVersion), []byte(storedVM))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		obj    runtime.Object
		prefix string
	}{
		{it, `{"kind":"VirtualMachineClusterInstancetype","apiVersion":"instancetype.kubevirt.io/v1beta1",`},
		{vm, `{"kind":"VirtualMachine","apiVersion":"kubevirt.io/v1",`},
	} {
		data, err := runtime.Encode(codec, tc.obj)
		if err != nil {
			t.Fatalf("encode %T: %v", tc.obj, err)
		}
		if !strings.HasPrefix(string(data), tc.prefix) {
			t.Errorf("stored as %.100s, want it to start with %s", data, tc.prefix)
		}
		back, err := runtime.Decode(codec, data)
		if err != nil {
			t.Fatalf("decode %T: %v", tc.obj, err)
		}
		if d := cmp.Diff(tc.obj, back); d != "" {
			t.Errorf("read back differently (-written +read):\n%s", d)
		}
	}
}

// The served scheme knows the group's kinds only in v1beta1, so OpenAPI names them so.
func TestServedSchemeHasTheInstancetypeKinds(t *testing.T) {
	gvks, _, err := servedScheme.ObjectKinds(&instancetypev1beta1.VirtualMachinePreference{})
	if err != nil {
		t.Fatal(err)
	}
	want := instancetypev1beta1.SchemeGroupVersion.WithKind("VirtualMachinePreference")
	if len(gvks) != 1 || gvks[0] != want {
		t.Errorf("kinds %v, want only %v", gvks, want)
	}
}

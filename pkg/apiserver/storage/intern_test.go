package storage

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver"
)

// Two VMs decoded from etcd share their managedFields and label strings, and are decoded exactly
// as without the sharing.
func TestStorageCodecSharesRepeatedMetadata(t *testing.T) {
	codec := Codec(apiserver.Scheme, kubevirtv1.SchemeGroupVersion)
	legacy := apiserver.Codecs.LegacyCodec(kubevirtv1.SchemeGroupVersion)
	decode := func(c runtime.Codec, name string) *kubevirtv1.VirtualMachine {
		t.Helper()
		obj, err := runtime.Decode(c, []byte(strings.Replace(storedVM, `"name":"vm1"`, `"name":"`+name+`"`, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*kubevirtv1.VirtualMachine)
	}
	a, b := decode(codec, "vm-a"), decode(codec, "vm-b")
	if diff := cmp.Diff(decode(legacy, "vm-a"), a); diff != "" {
		t.Errorf("decoded with sharing differs (-legacy +storage):\n%s", diff)
	}
	rawA, rawB := a.ManagedFields[0].FieldsV1.GetRawBytes(), b.ManagedFields[0].FieldsV1.GetRawBytes()
	if len(rawA) == 0 || &rawA[0] != &rawB[0] {
		t.Error("the two VMs' managedFields are separate copies")
	}
	for _, s := range []struct{ what, a, b string }{
		{"label value", a.Labels["app"], b.Labels["app"]},
		{"manager", a.ManagedFields[0].Manager, b.ManagedFields[0].Manager},
	} {
		if unsafe.StringData(s.a) != unsafe.StringData(s.b) {
			t.Errorf("the two VMs' %s %q are separate copies", s.what, s.a)
		}
	}
	for k := range a.Labels {
		for k2 := range b.Labels {
			if k == k2 && unsafe.StringData(k) != unsafe.StringData(k2) {
				t.Errorf("label key %q is a separate copy in each VM", k)
			}
		}
	}
	// A deep copy, what a writer modifies, owns its bytes.
	c := a.DeepCopy()
	if &c.ManagedFields[0].FieldsV1.GetRawBytes()[0] == &rawA[0] {
		t.Error("DeepCopy shares the managedFields bytes")
	}
}

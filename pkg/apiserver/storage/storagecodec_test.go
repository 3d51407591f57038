package storage

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver"
)

// storedVM is a VirtualMachine as etcd holds it: kind and apiVersion first, as this server writes.
const storedVM = `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine",
"metadata":{"name":"vm1","namespace":"ns","uid":"3f0e","resourceVersion":"7","generation":1,
 "creationTimestamp":"2026-11-22T10:00:00Z","labels":{"app":"web","kind":"not-this"},
 "managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"kubevirt.io/v1",
  "time":"2026-11-22T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:runStrategy":{}}}}]},
"spec":{"runStrategy":"Halted","template":{"metadata":{"labels":{"kubevirt.io/vm":"vm1"}},
 "spec":{"domain":{"devices":{"disks":[{"name":"root","disk":{"bus":"virtio"}}]},
  "resources":{"requests":{"memory":"128Mi"}}},
  "volumes":[{"name":"root","containerDisk":{"image":"quay.io/containerdisks/fedora:40"}}]}}},
"status":{"printableStatus":"Stopped"}}`

// What StorageCodec writes is what LegacyCodec writes, and it reads back the same objects.
func TestStorageCodecMatchesLegacyCodec(t *testing.T) {
	legacy := apiserver.Codecs.LegacyCodec(kubevirtv1.SchemeGroupVersion)
	codec := Codec(apiserver.Scheme, kubevirtv1.SchemeGroupVersion)
	obj, err := runtime.Decode(legacy, []byte(storedVM))
	if err != nil {
		t.Fatal(err)
	}
	want, err := runtime.Encode(legacy, obj)
	if err != nil {
		t.Fatal(err)
	}
	got, err := runtime.Encode(codec, obj)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoded differently:\n got %s\nwant %s", got, want)
	}
	// The saving depends on the encoder writing kind and apiVersion first.
	if _, ok := leadingTypeMeta(got); !ok {
		t.Fatalf("stored bytes do not start with kind and apiVersion: %.80s", got)
	}
	for _, data := range [][]byte{got, []byte(storedVM)} {
		a, err := runtime.Decode(codec, data)
		if err != nil {
			t.Fatal(err)
		}
		b, err := runtime.Decode(legacy, data)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(b, a); d != "" {
			t.Errorf("decoded differently (-legacy +storage):\n%s", d)
		}
	}
}

// Interpret answers what json.DefaultMetaFactory answers, with or without the short cut.
func TestLeadingTypeMetaFactory(t *testing.T) {
	cases := []struct {
		name string
		data string
		fast bool
	}{
		{"kind first", `{"kind":"VirtualMachine","apiVersion":"kubevirt.io/v1","spec":{}}`, true},
		{"apiVersion first", `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine"}`, true},
		{"core group", `{"apiVersion":"v1","kind":"Status"}`, true},
		{"metadata first", `{"metadata":{"name":"x","kind":"Nested"},"kind":"VirtualMachine","apiVersion":"kubevirt.io/v1"}`, false},
		{"only kind", `{"kind":"VirtualMachine"}`, false},
		{"duplicate kind", `{"kind":"A","kind":"B","apiVersion":"kubevirt.io/v1"}`, false},
		{"not a string", `{"kind":7,"apiVersion":"kubevirt.io/v1"}`, false},
		{"other case", `{"Kind":"VirtualMachine","APIVersion":"kubevirt.io/v1"}`, false},
		{"bad group version", `{"apiVersion":"a/b/c","kind":"VirtualMachine"}`, false},
		{"array", `[{"kind":"VirtualMachine","apiVersion":"kubevirt.io/v1"}]`, false},
		{"empty", ``, false},
		{"truncated", `{"kind":"VirtualMachine","apiVer`, false},
		{"white space", " {\n \"kind\" : \"VirtualMachine\",\t\"apiVersion\":\"kubevirt.io/v1\" }", true},
		{"escape", `{"kind":"Virtual\u004dachine","apiVersion":"kubevirt.io/v1"}`, false},
		{"not ASCII", `{"kind":"Virtuäl","apiVersion":"kubevirt.io/v1"}`, false},
		{"no comma", `{"kind":"VirtualMachine","apiVersion":"kubevirt.io/v1" "spec":{}}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, fast := leadingTypeMeta([]byte(tc.data))
			if fast != tc.fast {
				t.Errorf("short cut taken: %v, want %v", fast, tc.fast)
			}
			got, gotErr := leadingTypeMetaFactory{}.Interpret([]byte(tc.data))
			want, wantErr := json.DefaultMetaFactory.Interpret([]byte(tc.data))
			if (gotErr != nil) != (wantErr != nil) {
				t.Fatalf("error %v, want %v", gotErr, wantErr)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-default +ours):\n%s", d)
			}
		})
	}
}

// Malformed JSON after apiVersion and kind is still an error: the typed decode parses it all.
func TestStorageCodecRejectsMalformed(t *testing.T) {
	data := `{"kind":"VirtualMachine","apiVersion":"kubevirt.io/v1","metadata":{"name":"vm1"},"spec":}`
	if _, ok := leadingTypeMeta([]byte(data)); !ok {
		t.Fatal("short cut not taken")
	}
	if _, err := runtime.Decode(Codec(apiserver.Scheme, kubevirtv1.SchemeGroupVersion), []byte(data)); err == nil {
		t.Fatal("malformed JSON decoded without error")
	}
}

func BenchmarkInterpret(b *testing.B) {
	obj, err := runtime.Decode(apiserver.Codecs.LegacyCodec(kubevirtv1.SchemeGroupVersion), []byte(storedVM))
	if err != nil {
		b.Fatal(err)
	}
	data, err := runtime.Encode(Codec(apiserver.Scheme, kubevirtv1.SchemeGroupVersion), obj)
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []struct {
		name string
		mf   json.MetaFactory
	}{{"default", json.DefaultMetaFactory}, {"leading", leadingTypeMetaFactory{}}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := f.mf.Interpret(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

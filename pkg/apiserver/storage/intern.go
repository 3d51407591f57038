package storage

import (
	"unique"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Objects decoded from etcd live in the watch cache for as long as they are stored: with 10,000
// VirtualMachines that is most of this server's heap. Many of them repeat the same metadata: VMs
// made from one template by one client have the same managedFields (field sets name fields, not
// values: ~1.8 KB of JSON each for the benchmark's VMs) and the same label and annotation keys
// and often values. The storage codec makes decoded objects share one copy of those (Go's
// `unique` package: a canonical value lives as long as something refers to it).
//
// Sharing relies on decoded objects being read only, as objects of the watch cache are anyway
// (they are handed to every reader; a writer deep-copies first, and DeepCopy copies the bytes).

// internedDecoding wraps c so that every object it decodes shares its repeated metadata.
func internedDecoding(c runtime.Codec) runtime.Codec { return internCodec{c} }

type internCodec struct{ runtime.Codec }

func (c internCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := c.Codec.Decode(data, defaults, into)
	if err == nil {
		internMetadata(obj)
	}
	return obj, gvk, err
}

// internMetadata replaces obj's managedFields entries, labels and annotations by shared copies.
// Objects without metadata (lists, status) are left as they are.
func internMetadata(obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	fields := m.GetManagedFields()
	for i := range fields {
		e := &fields[i]
		e.Manager = intern(e.Manager)
		e.Operation = internAs(e.Operation)
		e.APIVersion = intern(e.APIVersion)
		e.FieldsType = intern(e.FieldsType)
		e.Subresource = intern(e.Subresource)
		if e.FieldsV1 != nil {
			// SetRawBytes would copy the bytes: sharing them is the point.
			e.FieldsV1.Raw = internBytes(e.FieldsV1.GetRawBytes()) //lint:ignore SA1019 see above
		}
	}
	internMap(m.GetLabels())
	internMap(m.GetAnnotations())
}

// internMap makes m's keys and values shared copies, in place: assigning to an existing key also
// stores the key given.
func internMap(m map[string]string) {
	for k, v := range m {
		m[intern(k)] = intern(v)
	}
}

func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

func internAs[T ~string](s T) T { return T(intern(string(s))) }

// internBytes returns a shared copy of b. The bytes belong to the canonical string and must not
// be written to.
func internBytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	// unique.Make stores a copy of a string it has not seen: a view of b is enough to look it up.
	s := unique.Make(unsafe.String(&b[0], len(b))).Value()
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

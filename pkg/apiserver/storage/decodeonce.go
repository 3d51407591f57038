package storage

import (
	"bytes"
	"hash/maphash"
	"io"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every write of an object is decoded twice from the same bytes: k8s.io/apiserver's etcd store
// decodes the value it has just written into the response object, and the watch cache's
// reflector decodes the same value again from etcd's watch event (a ~7 KB VM: ~130 µs each, 12%
// of a create's server CPU together). decodedOnce makes the second of the two a deep copy of the
// first: the codec marks the bytes it encodes for a write, the first decode of marked bytes
// keeps a private copy of its result, and the second takes it. Decoding is a function of the
// bytes, so a copy of the first result is what the second decode would have produced; which
// decode comes first does not matter (the watch event may overtake the write's response).
//
// Only bytes this codec encoded are remembered; every other decode (GETs and lists read from
// etcd, which the watch cache mostly answers anyway) costs one hash of its bytes more (~1 µs for a
// VM). A remembered copy is handed out once, and the oldest writes are forgotten.

// writeMemoSize bounds the writes remembered at once: a write's two decodes follow each other
// within milliseconds, so this only needs to cover the writes in flight.
const writeMemoSize = 64

// decodedOnce wraps a storage codec (see Codec).
type decodedOnce struct {
	runtime.Codec
	memo *writeMemo
}

// decodingWritesOnce wraps c so that each write it encodes is parsed once (see above).
func decodingWritesOnce(c runtime.Codec) runtime.Codec {
	return decodedOnce{Codec: c, memo: newWriteMemo(writeMemoSize)}
}

// Encode encodes obj and marks the bytes when they are written to a buffer, as
// k8s.io/apiserver's store encodes for etcd (runtime.Encode).
func (c decodedOnce) Encode(obj runtime.Object, w io.Writer) error {
	buf, ok := w.(*bytes.Buffer)
	if !ok {
		return c.Codec.Encode(obj, w)
	}
	start := buf.Len()
	if err := c.Codec.Encode(obj, w); err != nil {
		return err
	}
	c.memo.mark(buf.Bytes()[start:])
	return nil
}

// Decode decodes data; the second decode of the bytes of a write is a copy of the first. When
// both run at once (the watch event arrives while the write's response is read back), the second
// waits for the first instead of parsing the same bytes beside it.
func (c decodedOnce) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	e := c.memo.lookup(data)
	if e == nil {
		return c.Codec.Decode(data, defaults, into)
	}
	first, wait := c.memo.claim(e)
	if !first {
		<-wait
		if obj, gvk, ok := c.memo.take(e); ok {
			if out, ok := handOut(obj, gvk, into); ok {
				return out, &gvk, nil
			}
		}
		return c.Codec.Decode(data, defaults, into)
	}
	defer c.memo.decoded(e)
	obj, gvk, err := c.Codec.Decode(data, defaults, into)
	if err == nil && gvk != nil {
		copied := obj.DeepCopyObject()
		internMetadata(copied)
		c.memo.keep(e, copied, *gvk)
	}
	return obj, gvk, err
}

// handOut returns the remembered decode as the versioning codec leaves a decode: a new object,
// converted to the internal version, has no kind; an object decoded into keeps the kind and
// version of the data.
func handOut(obj runtime.Object, gvk schema.GroupVersionKind, into runtime.Object) (runtime.Object, bool) {
	if into == nil {
		obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		return obj, true
	}
	if reflect.TypeOf(into) != reflect.TypeOf(obj) {
		return nil, false
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	reflect.ValueOf(into).Elem().Set(reflect.ValueOf(obj).Elem())
	return into, true
}

// writeMemo remembers the latest writes' bytes and, once decoded, a private copy of the result.
type writeMemo struct {
	seed maphash.Seed
	mu   sync.Mutex
	// ring holds the entries in the order their writes were encoded; byHash finds them.
	ring   []*memoEntry
	next   int
	byHash map[uint64]*memoEntry
}

type memoEntry struct {
	hash uint64
	data []byte
	// decoding is closed when the first decode is done; nil until one starts.
	decoding chan struct{}
	// obj is the first decode's result (nil until then), for the second decode to take.
	obj runtime.Object
	gvk schema.GroupVersionKind
}

func newWriteMemo(size int) *writeMemo {
	return &writeMemo{seed: maphash.MakeSeed(), ring: make([]*memoEntry, size), byHash: map[uint64]*memoEntry{}}
}

// mark remembers the bytes of a write, forgetting the oldest write remembered.
func (m *writeMemo) mark(data []byte) {
	e := &memoEntry{hash: maphash.Bytes(m.seed, data), data: data}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.ring[m.next]; old != nil && m.byHash[old.hash] == old {
		delete(m.byHash, old.hash)
	}
	m.ring[m.next] = e
	m.next = (m.next + 1) % len(m.ring)
	m.byHash[e.hash] = e
}

// lookup returns the entry of a write whose bytes are data, or nil.
func (m *writeMemo) lookup(data []byte) *memoEntry {
	h := maphash.Bytes(m.seed, data)
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.byHash[h]; e != nil && bytes.Equal(e.data, data) {
		return e
	}
	return nil
}

// claim makes the caller e's first decode, or returns the channel that the first one closes.
func (m *writeMemo) claim(e *memoEntry) (first bool, wait <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.decoding != nil {
		return false, e.decoding
	}
	e.decoding = make(chan struct{})
	return true, nil
}

// decoded says that e's first decode is done (kept or failed).
func (m *writeMemo) decoded(e *memoEntry) {
	close(e.decoding)
}

// take hands out the decoded copy e holds, once, and forgets e. (lookup compared e's bytes.)
func (m *writeMemo) take(e *memoEntry) (runtime.Object, schema.GroupVersionKind, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.obj == nil {
		return nil, schema.GroupVersionKind{}, false
	}
	obj, gvk := e.obj, e.gvk
	e.obj = nil
	if m.byHash[e.hash] == e {
		delete(m.byHash, e.hash)
	}
	return obj, gvk, true
}

// keep stores the first decode's copy in e (claim makes exactly one decode the first).
func (m *writeMemo) keep(e *memoEntry, obj runtime.Object, gvk schema.GroupVersionKind) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.obj, e.gvk = obj, gvk
}

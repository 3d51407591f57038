package storage

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	apistorage "k8s.io/apiserver/pkg/storage"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver"
)

// countingCodec counts the decodes that reach the codec it wraps.
type countingCodec struct {
	runtime.Codec
	decodes atomic.Int32
}

func (c *countingCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	c.decodes.Add(1)
	return c.Codec.Decode(data, defaults, into)
}

// decodeOnceFixture is a storage codec remembering size writes, over a codec that counts.
type decodeOnceFixture struct {
	codec runtime.Codec
	inner *countingCodec
}

func newDecodeOnceFixture(size int) decodeOnceFixture {
	inner := &countingCodec{Codec: decodingCodec(apiserver.Scheme, kubevirtv1.SchemeGroupVersion)}
	return decodeOnceFixture{codec: decodedOnce{Codec: inner, memo: newWriteMemo(size)}, inner: inner}
}

// write encodes the stored VM named name as the etcd store does for a write.
func (f decodeOnceFixture) write(t *testing.T, name string) []byte {
	t.Helper()
	obj, err := runtime.Decode(apiserver.Codecs.LegacyCodec(kubevirtv1.SchemeGroupVersion),
		[]byte(strings.Replace(storedVM, `"name":"vm1"`, `"name":"`+name+`"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := runtime.Encode(f.codec, obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// readBack decodes data into a new VM, as the store reads a write back; watched decodes it into
// a new object, as the watch cache's reflector does.
func (f decodeOnceFixture) readBack(t *testing.T, data []byte) *kubevirtv1.VirtualMachine {
	t.Helper()
	out := &kubevirtv1.VirtualMachine{}
	if _, _, err := f.codec.Decode(data, nil, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (f decodeOnceFixture) watched(t *testing.T, data []byte) *kubevirtv1.VirtualMachine {
	t.Helper()
	obj, err := runtime.Decode(f.codec, data)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*kubevirtv1.VirtualMachine)
}

// plainDecodes are what the read back and the watch event decode when every decode parses.
func plainDecodes(t *testing.T, data []byte) (readBack, watched *kubevirtv1.VirtualMachine) {
	t.Helper()
	plain := decodeOnceFixture{codec: decodingCodec(apiserver.Scheme, kubevirtv1.SchemeGroupVersion)}
	return plain.readBack(t, data), plain.watched(t, data)
}

func TestWriteIsDecodedOnce(t *testing.T) {
	for _, order := range []string{"read back first", "watch event first"} {
		t.Run(order, func(t *testing.T) {
			f := newDecodeOnceFixture(writeMemoSize)
			data := f.write(t, "vm1")
			var out, watched *kubevirtv1.VirtualMachine
			if order == "read back first" {
				out = f.readBack(t, data)
				watched = f.watched(t, data)
			} else {
				watched = f.watched(t, data)
				out = f.readBack(t, data)
			}
			if n := f.inner.decodes.Load(); n != 1 {
				t.Errorf("the write's bytes were parsed %d times, want 1", n)
			}
			wantOut, wantWatched := plainDecodes(t, data)
			if d := cmp.Diff(wantOut, out); d != "" {
				t.Errorf("read back (-decoded +got):\n%s", d)
			}
			if d := cmp.Diff(wantWatched, watched); d != "" {
				t.Errorf("watch event (-decoded +got):\n%s", d)
			}
			// The two objects share nothing a caller may write to.
			if out.Spec.Template == watched.Spec.Template {
				t.Error("the read back and the watched object share their template")
			}
			out.Labels["changed"] = "by the response"
			if _, ok := watched.Labels["changed"]; ok {
				t.Error("a change to the read-back object reached the watched one")
			}
			// The copy is handed out once: a third decode parses again.
			again := f.watched(t, data)
			if n := f.inner.decodes.Load(); n != 2 {
				t.Errorf("parses after a third decode: %d, want 2", n)
			}
			if again == watched || again == out {
				t.Error("the third decode returned an object handed out before")
			}
		})
	}
}

func TestDecodeOnceOnlyForWrites(t *testing.T) {
	f := newDecodeOnceFixture(2)
	// Bytes this codec did not encode (read from etcd): each decode parses them.
	stored := []byte(strings.Replace(storedVM, `"name":"vm1"`, `"name":"read"`, 1))
	f.readBack(t, stored)
	f.watched(t, stored)
	if n := f.inner.decodes.Load(); n != 2 {
		t.Errorf("bytes not written here were parsed %d times for 2 decodes, want 2", n)
	}

	// Only the latest writes are remembered.
	first := f.write(t, "first")
	f.write(t, "second")
	last := f.write(t, "third")
	before := f.inner.decodes.Load()
	f.readBack(t, first)
	f.watched(t, first)
	if n := f.inner.decodes.Load() - before; n != 2 {
		t.Errorf("a forgotten write was parsed %d times for 2 decodes, want 2", n)
	}
	before = f.inner.decodes.Load()
	f.readBack(t, last)
	f.watched(t, last)
	if n := f.inner.decodes.Load() - before; n != 1 {
		t.Errorf("the latest write was parsed %d times for 2 decodes, want 1", n)
	}
}

func TestDecodeOnceComparesBytes(t *testing.T) {
	f := newDecodeOnceFixture(writeMemoSize)
	data := f.write(t, "vm1")
	f.readBack(t, data)
	// Other bytes that are no write of this codec never get the remembered copy.
	other := bytes.Replace(data, []byte(`"vm1"`), []byte(`"vm2"`), 1)
	if got := f.watched(t, other); got.Name != "vm2" {
		t.Fatalf("decoded %q from the bytes of vm2", got.Name)
	}
	if got := f.watched(t, data); got.Name != "vm1" {
		t.Fatalf("decoded %q from the bytes of vm1", got.Name)
	}
	if n := f.inner.decodes.Load(); n != 2 {
		t.Errorf("parses: %d, want 2 (the write once, the other bytes once)", n)
	}
}

// Through k8s.io/apiserver's etcd store, a real embedded etcd and the watch cache, each create's
// value is parsed once: for the response; the watch cache's copy comes from it.
func TestWritesAreParsedOnceThroughEtcdAndTheWatchCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inner := &countingCodec{Codec: decodingCodec(apiserver.Scheme, kubevirtv1.SchemeGroupVersion)}
	s := sharingVMStorageWith(ctx, t, decodedOnce{Codec: inner, memo: newWriteMemo(writeMemoSize)})
	// Served by the watch cache once it is ready: its events are the cache's objects.
	var w watch.Interface
	for {
		var err error
		if w, err = s.Watch(ctx, prefix, apistorage.ListOptions{ResourceVersion: "0", Predicate: apistorage.Everything, Recursive: true}); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the watch cache never became ready: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	defer w.Stop()
	const n = 5
	created := map[string]*kubevirtv1.VirtualMachine{}
	for i := range n {
		name := fmt.Sprintf("vm-%d", i)
		out := &kubevirtv1.VirtualMachine{}
		if err := s.Create(ctx, prefix+"ns/"+name, shapedVM(name, "1Gi"), out, 0); err != nil {
			t.Fatal(err)
		}
		created[name] = out
	}
	for range n {
		select {
		case ev := <-w.ResultChan():
			obj := ev.Object
			if co, ok := obj.(runtime.CacheableObject); ok {
				obj = co.GetObject()
			}
			cached := obj.(*kubevirtv1.VirtualMachine).DeepCopy()
			out := created[cached.Name]
			cached.TypeMeta = out.TypeMeta
			if d := cmp.Diff(out, cached); d != "" {
				t.Errorf("%s: the watch cache holds (-created +cached):\n%s", cached.Name, d)
			}
		case <-ctx.Done():
			t.Fatal("the watch cache did not send every create")
		}
	}
	if got := inner.decodes.Load(); got != n {
		t.Errorf("%d creates were parsed %d times, want %d", n, got, n)
	}
}

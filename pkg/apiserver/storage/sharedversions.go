package storage

import (
	"maps"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// The watch cache keeps every version of an object that its event history holds (at least the
// last 75 s of events, and all of them until newer events take their place), and a delete event
// holds the object's last version a second time. Most writes leave the spec as it was: the
// controllers' and node agents' status writes, a finalizer's removal, the delete. Each such
// version was a full decoded copy of the spec (~6 KB of a benchmark VM's ~9 KB) and, for the
// deletes and metadata writes, of the status too.
//
// cacheFeed therefore remembers the last object it passed on for each name (versionTable) and
// gives the next version of that object its predecessor's spec and status where they are equal,
// compared strictly (reflect.DeepEqual: what is equal serializes alike, so readers see exactly
// what etcd holds). As with sharedspecs.go, both objects are watch cache objects, read only.

// objectName names an object within one resource.
type objectName struct{ namespace, name string }

// versionTable is the last object of each name the watch cache was fed.
type versionTable struct {
	mu   sync.Mutex
	last map[objectName]runtime.Object
}

func newVersionTable() *versionTable {
	return &versionTable{last: map[objectName]runtime.Object{}}
}

func nameOf(obj runtime.Object) (objectName, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return objectName{}, false
	}
	return objectName{m.GetNamespace(), m.GetName()}, true
}

// listed records the objects of a list the cache was fed. A list's first page starts the table
// afresh: the cache starts afresh from it too, and names deleted meanwhile must not stay.
func (t *versionTable) listed(items []runtime.Object, firstPage bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if firstPage {
		t.last = make(map[objectName]runtime.Object, len(items))
	}
	for _, o := range items {
		if n, ok := nameOf(o); ok {
			t.last[n] = o
		}
	}
}

// observed makes an event's object share its predecessor's unchanged parts and records it as
// the name's last object (a deleted name is forgotten).
func (t *versionTable) observed(e watch.Event) {
	if e.Type != watch.Added && e.Type != watch.Modified && e.Type != watch.Deleted {
		return
	}
	n, ok := nameOf(e.Object)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if prev, ok := t.last[n]; ok {
		shareUnchanged(prev, e.Object)
	}
	if e.Type == watch.Deleted {
		delete(t.last, n)
	} else {
		t.last[n] = e.Object
	}
}

// shareUnchanged gives cur prev's labels, annotations, owner references, spec and status where
// they are equal. Specs and statuses of kinds without frequent writes are left alone.
func shareUnchanged(prev, cur runtime.Object) {
	shareUnchangedMetadata(prev, cur)
	switch c := cur.(type) {
	case *kubevirtv1.VirtualMachine:
		if p, ok := prev.(*kubevirtv1.VirtualMachine); ok {
			shareEqual(&p.Spec, &c.Spec)
			shareEqual(&p.Status, &c.Status)
		}
	case *kubevirtv1.VirtualMachineInstance:
		if p, ok := prev.(*kubevirtv1.VirtualMachineInstance); ok {
			shareEqual(&p.Spec, &c.Spec)
			shareEqual(&p.Status, &c.Status)
		}
	case *kubevirtv1.VirtualMachineInstanceReplicaSet:
		if p, ok := prev.(*kubevirtv1.VirtualMachineInstanceReplicaSet); ok {
			shareEqual(&p.Spec, &c.Spec)
			shareEqual(&p.Status, &c.Status)
		}
	case *kubevirtv1.VirtualMachineInstanceMigration:
		if p, ok := prev.(*kubevirtv1.VirtualMachineInstanceMigration); ok {
			shareEqual(&p.Spec, &c.Spec)
			shareEqual(&p.Status, &c.Status)
		}
	}
}

// shareUnchangedMetadata shares the parts of metadata that writes seldom change (the strings in
// them are shared already, see intern.go; this shares the maps and slices holding them).
func shareUnchangedMetadata(prev, cur runtime.Object) {
	p, err := meta.Accessor(prev)
	if err != nil {
		return
	}
	c, err := meta.Accessor(cur)
	if err != nil {
		return
	}
	if l := p.GetLabels(); len(l) > 0 && maps.Equal(l, c.GetLabels()) {
		c.SetLabels(l)
	}
	if a := p.GetAnnotations(); len(a) > 0 && maps.Equal(a, c.GetAnnotations()) {
		c.SetAnnotations(a)
	}
	if o := p.GetOwnerReferences(); len(o) > 0 && reflect.DeepEqual(o, c.GetOwnerReferences()) {
		c.SetOwnerReferences(o)
	}
}

// shareEqual makes *cur a copy of *prev when the two are equal: the struct itself stays cur's,
// everything it points to (slices, maps, pointed-to structs) becomes prev's, and cur's own
// becomes garbage.
func shareEqual[T any](prev, cur *T) {
	if reflect.DeepEqual(*prev, *cur) {
		*cur = *prev
	}
}

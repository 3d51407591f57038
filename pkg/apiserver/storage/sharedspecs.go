package storage

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// The watch cache holds one decoded object per stored VM and VMI, and VMs of one shape repeat
// the same small maps in their specs: the resource requests and limits, the node selector. A Go
// map is expensive for its size: even a one-entry map takes a group of eight slots, and a slot
// of a ResourceList holds a whole Quantity. The three maps are ~21% of a decoded benchmark VM
// (docs/performance.md, "Decisions"), so objects that enter the watch cache share one copy of each
// distinct map (shareSpecMaps, applied by cacheFeed).
//
// Only objects of the watch cache may share: they are read only (k8s.io/apiserver hands them to
// every reader, and deep-copies one before an update modifies it). Objects decoded for a single
// request (a GET from etcd, the current object of an update) keep maps of their own, since the
// code that handles them may write to them.

// maxSharedMaps bounds the canonical maps kept for sharing. When it is reached the table starts
// afresh: maps already shared stay valid (objects keep them), later objects share new copies.
const maxSharedMaps = 1024

// sharedMaps holds one canonical map per content, keyed by kind and content.
var sharedMaps = struct {
	sync.Mutex
	m map[string]any
}{m: map[string]any{}}

// canonicalMap returns the map stored under key, or stores and returns m.
func canonicalMap[M any](key string, m M) M {
	sharedMaps.Lock()
	defer sharedMaps.Unlock()
	if c, ok := sharedMaps.m[key].(M); ok {
		return c
	}
	if len(sharedMaps.m) >= maxSharedMaps {
		clear(sharedMaps.m)
	}
	sharedMaps.m[key] = m
	return m
}

// mapKey writes a map's kind and its entries in key order, each string length-prefixed so that
// no two different maps give the same key. value is the entry's value as it is serialized.
func mapKey[K ~string, V any](kind string, m map[K]V, value func(V) string) string {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(kind)
	for _, k := range keys {
		for _, s := range []string{string(k), value(m[k])} {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(len(s)))
			b.WriteByte(':')
			b.WriteString(s)
		}
	}
	return b.String()
}

// shareResourceList returns the canonical copy of l: equal entries written alike. A Quantity is
// keyed by its serialized form, so the shared map serializes exactly as l did.
func shareResourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	// q is a copy of the map's value: String caches its result in the copy, not in the map.
	return canonicalMap(mapKey("ResourceList", l, func(q resource.Quantity) string { return q.String() }), l)
}

func shareStringMap(kind string, m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	return canonicalMap(mapKey(kind, m, func(v string) string { return v }), m)
}

// shareSpecMaps makes obj use the canonical copies of its specs' repeated maps. Other objects are
// left alone.
func shareSpecMaps(obj runtime.Object) {
	switch o := obj.(type) {
	case *kubevirtv1.VirtualMachine:
		if o.Spec.Template != nil {
			shareInstanceSpecMaps(&o.Spec.Template.Spec)
		}
	case *kubevirtv1.VirtualMachineInstance:
		shareInstanceSpecMaps(&o.Spec)
	case *kubevirtv1.VirtualMachineInstanceReplicaSet:
		if o.Spec.Template != nil {
			shareInstanceSpecMaps(&o.Spec.Template.Spec)
		}
	}
}

func shareInstanceSpecMaps(s *kubevirtv1.VirtualMachineInstanceSpec) {
	r := &s.Domain.Resources
	r.Requests = shareResourceList(r.Requests)
	r.Limits = shareResourceList(r.Limits)
	s.NodeSelector = shareStringMap("NodeSelector", s.NodeSelector)
}

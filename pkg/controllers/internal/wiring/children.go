package wiring

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
)

// Children returns the event handlers of the objects of type T that a controller creates and
// deletes for the objects it owns: ownerKey names a child's owner ("" for none). A child's
// creation, the start of its deletion and its removal are observed for the owner's expectations
// (exp), and the owner is queued; an owner that lost the child to another is queued too. orphan,
// when set, handles an added or updated child without an owner key (to adopt it).
func Children[T metav1.Object](q *loop.Queue, exp *expectations.Expectations, ownerKey func(T) string, orphan func(T)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			child, ok := obj.(T)
			if !ok {
				return
			}
			if key := ownerKey(child); key != "" {
				exp.CreationObserved(key)
				q.Add(key)
			} else if orphan != nil {
				orphan(child)
			}
		},
		UpdateFunc: func(old, cur any) {
			oldChild, ok1 := old.(T)
			child, ok2 := cur.(T)
			if !ok1 || !ok2 {
				return
			}
			key := ownerKey(child)
			if oldKey := ownerKey(oldChild); oldKey != "" && oldKey != key {
				q.Add(oldKey)
			}
			switch {
			case key != "":
				if child.GetDeletionTimestamp() != nil && oldChild.GetDeletionTimestamp() == nil {
					exp.DeletionObserved(key, child.GetUID())
				}
				q.Add(key)
			case orphan != nil:
				orphan(child)
			}
		},
		DeleteFunc: func(obj any) {
			child, ok := Object[T](obj)
			if !ok {
				return
			}
			if key := ownerKey(child); key != "" {
				exp.DeletionObserved(key, child.GetUID())
				q.Add(key)
			}
		},
	}
}

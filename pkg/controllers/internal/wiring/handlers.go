package wiring

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
)

// Changed handles an add or an update of a controller's own resource T: it notes the version
// the cache now holds (exp.VersionObserved: the controller's own status writes wait for it) and
// queues the object. Objects of other types are ignored.
func Changed[T metav1.Object](q *loop.Queue, exp *expectations.Expectations, obj any) {
	o, ok := obj.(T)
	if !ok {
		return
	}
	key := cache.MetaObjectToName(o).String()
	exp.VersionObserved(key, o.GetResourceVersion())
	q.Add(key)
}

// Own returns the event handlers of a controller's own resource: changed (a method calling
// Changed) handles an add or an update, a delete queues the object.
func Own(q *loop.Queue, changed func(obj any)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, cur any) { changed(cur) },
		DeleteFunc: q.AddObject,
	}
}

// Handler is an event handler to add to an informer.
type Handler struct {
	Informer cache.SharedInformer
	Handler  cache.ResourceEventHandler
}

// Register adds each handler to its informer, in order, and stops at the first error.
func Register(handlers ...Handler) error {
	for _, h := range handlers {
		if _, err := h.Informer.AddEventHandler(h.Handler); err != nil {
			return err
		}
	}
	return nil
}

// Object returns the object of an event as a T, unwrapping the tombstone of a delete that the
// informer learnt of only by relisting; false when it is not a T.
func Object[T any](obj any) (T, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(T)
	return o, ok
}

// Package subresource holds what NativeVirt's action subresources (start, stop, pause, console,
// …) share: one Handler per action, served both as a kubevirt.io Connecter and by the
// subresources.kubevirt.io mux; option body decoding; dry-run parsing; metav1.Status answers.
package subresource

import (
	"context"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Handler serves one action on one named, namespaced object. Authentication and authorization
// happened before: the generic filter chain authorizes the request as the subresource.
type Handler interface {
	ServeAction(w http.ResponseWriter, r *http.Request, namespace, name string)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(w http.ResponseWriter, r *http.Request, namespace, name string)

// ServeAction calls f.
func (f HandlerFunc) ServeAction(w http.ResponseWriter, r *http.Request, namespace, name string) {
	f(w, r, namespace, name)
}

// ConnectREST serves a Handler as a subresource of a kubevirt.io resource. A Connecter is what
// lets an action take the raw request (a PUT body of options, or a WebSocket upgrade) while
// RBAC still sees the subresource with the verb of its method (PUT: update, GET: get).
type ConnectREST struct {
	newFunc func() runtime.Object
	methods []string
	handler Handler
}

var (
	_ rest.Connecter = &ConnectREST{}
	_ rest.Storage   = &ConnectREST{}
)

// NewConnectREST serves handler for the given HTTP methods; newFunc returns the kind published
// for the subresource (its options type).
func NewConnectREST(newFunc func() runtime.Object, handler Handler, methods ...string) *ConnectREST {
	return &ConnectREST{newFunc: newFunc, methods: methods, handler: handler}
}

// New returns the subresource's published kind.
func (c *ConnectREST) New() runtime.Object { return c.newFunc() }

// Destroy is a no-op: the parent resource's store owns the storage.
func (c *ConnectREST) Destroy() {}

// NewConnectOptions returns no options type: the handler reads options from the request body
// and query itself.
func (c *ConnectREST) NewConnectOptions() (runtime.Object, bool, string) { return nil, false, "" }

// ConnectMethods lists the HTTP methods of the action.
func (c *ConnectREST) ConnectMethods() []string { return c.methods }

// Connect returns the handler bound to the object named id in the request's namespace.
func (c *ConnectREST) Connect(ctx context.Context, id string, _ runtime.Object, _ rest.Responder) (http.Handler, error) {
	ns, ok := genericapirequest.NamespaceFrom(ctx)
	if !ok || ns == "" {
		return nil, apierrors.NewBadRequest("a namespace is required")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.handler.ServeAction(w, r, ns, id)
	}), nil
}

package cmdutil

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	kvscheme "github.com/nativevirt/nativevirt/pkg/client/clientset/versioned/scheme"
)

// Events records the events of a daemon on its objects, kubevirt.io's kinds included.
type Events struct {
	broadcaster record.EventBroadcaster
	scheme      *runtime.Scheme
}

// NewEvents starts sending the events recorded through it to kube-apiserver.
func NewEvents(kube kubernetes.Interface) (*Events, error) {
	s := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), kvscheme.AddToScheme(s)); err != nil {
		return nil, err
	}
	e := &Events{broadcaster: record.NewBroadcaster(), scheme: s}
	e.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	return e, nil
}

// Recorder records events from source (component, and host for a node's daemon).
func (e *Events) Recorder(source corev1.EventSource) record.EventRecorder {
	return e.broadcaster.NewRecorder(e.scheme, source)
}

// Shutdown stops sending events.
func (e *Events) Shutdown() { e.broadcaster.Shutdown() }
